"""The CLI's entry in this process, and the shape every bad-input error has."""

from __future__ import annotations


class CliResult:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def in_process(capsys, *args) -> CliResult:
    """The real CLI entry (`main`), in this process: the same code path, without re-importing ray."""
    from tui_eval.cli import main

    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return CliResult(code, out.out, out.err)


def assert_one_line_error(proc, *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("tui-eval: error: ")]
    assert len(errors) == 1, proc.stderr[-2000:]
    for needle in needles:
        assert needle in errors[0], errors[0]
