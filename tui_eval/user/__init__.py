"""The user's own code: `--import`ed modules, and envs registered only under a script's main block
(`if __name__ == "__main__":`)."""
