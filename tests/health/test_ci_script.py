""".ci/run installs the terminal tools the real-terminal tests drive, and ends CI when it cannot: otherwise every
tmux, X, kitty and Chromium test would have nothing to run on."""

from __future__ import annotations

import shutil
import subprocess

from tests.support.common import ROOT


def test_ci_ends_with_the_tools_named_when_they_cannot_be_installed(tmp_path):
    # a copy of the script in a checkout of its own: should it go on, it cannot touch this one
    checkout = tmp_path / "checkout"
    (checkout / ".ci").mkdir(parents=True)
    shutil.copy(ROOT / ".ci" / "run", checkout / ".ci" / "run")
    # a PATH with none of the tools, and an apt-get that installs nothing (as without network or root);
    # no python3 either, so that nothing past the tools step could run
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    asked = tmp_path / "apt-get.args"
    (bin_dir / "apt-get").write_text(f'#!/bin/sh\necho "$@" >> {asked}\nexit 100\n')
    (bin_dir / "apt-get").chmod(0o755)
    (bin_dir / "dirname").symlink_to(shutil.which("dirname"))
    done = subprocess.run([shutil.which("bash"), str(checkout / ".ci" / "run")], env={"PATH": str(bin_dir)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    error = done.stderr.strip().splitlines()[-1]
    assert error.startswith("error: could not install the terminal tools the tests need:"), done.stderr
    for package in ("tmux", "chromium", "xvfb", "xterm", "kitty", "x11-apps", "xdotool"):
        assert f" {package}" in error, error
    assert "update" in asked.read_text()  # it did try to install them
    assert not (checkout / ".venv").exists()
