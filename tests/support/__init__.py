"""What the tests share: the bundled checkpoints, a CLI runner, real engines and apps, tiny trained
checkpoints, envs that break on purpose, and the fakes (`fake_path`, `fake_source`)."""
