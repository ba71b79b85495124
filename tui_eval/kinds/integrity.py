"""A checkpoint's files read through before anything is loaded from them: a truncated, emptied or overwritten
file is one line naming it, said while the checkpoint is read (before the run's header and its log), not a
library's unpickling error once a path loads it.

Only the structure is read (pickle opcodes, a zip's directory and checksums, JSON, YAML, ONNX's protobuf):
nothing in a file is run, and a file of a type not listed here is left to its library.
"""

from __future__ import annotations

import json
import pickletools
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

from tui_eval.errors import BadInput

CHECKSUM_LIMIT = 64 * 1024 * 1024  # zip members are checksummed up to this size (bigger: the directory only)
ZIP_MAGIC = b"PK\x03\x04"


def check_files(files: Iterable[Path]) -> None:
    """BadInput (one line: which file, what is wrong, what to do) for the first file that is damaged."""
    for path in files:
        reader = READERS.get(path.suffix.lower())
        if reader is None or not path.is_file():
            continue
        try:
            if path.stat().st_size == 0:
                raise ValueError("it is empty")
            reader(path)
        except (ValueError, OSError, EOFError, zipfile.BadZipFile, UnicodeDecodeError) as exc:
            raise BadInput(f"checkpoint file {path} is unreadable ({_reason(exc)}); copy it again from where the "
                           "checkpoint was saved, or pass another checkpoint") from None


def checked_files(checkpoint: Path) -> list[Path]:
    """The files of a checkpoint that are read through: every file below a checkpoint folder; for a checkpoint
    file, it and the files beside it that its kind may read (a run's `params/`, `exported/`, its ONNX export),
    not the run's other checkpoints (files of its own type beside it), which this run does not load."""
    if checkpoint.is_dir():
        return sorted(p for p in checkpoint.rglob("*") if p.suffix.lower() in READERS)
    folder = checkpoint.parent
    beside = [p for p in folder.iterdir() if p.is_file() and p.suffix.lower() != checkpoint.suffix.lower()]
    below = [p for sub in folder.iterdir() if sub.is_dir() for p in sub.iterdir() if p.is_file()]
    return [checkpoint, *sorted(p for p in beside + below if p.suffix.lower() in READERS)]


def files_read_first(path: Path) -> list[Path]:
    """What a kind may read while it recognises `path` and reads it offline: a checkpoint file and the files
    beside it, or a folder's settings (JSON, YAML); a folder's weights are checked once the kind has picked its
    checkpoint among them (`checked_files(kind.checkpoint)`)."""
    if path.is_file():
        return checked_files(path)
    return sorted(p for p in path.rglob("*") if p.suffix.lower() in SETTINGS)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if len(text) < 120 else text[:117] + "..."


def _read_pickle(path: Path) -> None:
    with path.open("rb") as fh:
        for _ in pickletools.genops(fh):  # raises ValueError on truncated or foreign bytes, runs nothing
            pass


def _read_torch(path: Path) -> None:
    with path.open("rb") as fh:
        head = fh.read(4)
    if head == ZIP_MAGIC:  # torch.save's format since torch 1.6 (and TorchScript archives)
        _read_zip(path)
    else:  # the legacy format: a pickle first (then raw storages, which are not checked)
        _read_pickle(path)


def _read_zip(path: Path) -> None:
    with zipfile.ZipFile(path) as archive:
        if not archive.namelist():
            raise ValueError("an archive with nothing in it")
        if path.stat().st_size <= CHECKSUM_LIMIT and (bad := archive.testzip()) is not None:
            raise ValueError(f"member {bad} fails its checksum")


def _read_json(path: Path) -> None:
    json.loads(path.read_text(encoding="utf-8"))


def _read_yaml(path: Path) -> None:
    import yaml

    class AnyTagLoader(yaml.SafeLoader):  # configs name Python classes with tags; only the syntax matters here
        pass

    AnyTagLoader.add_multi_constructor("", lambda loader, suffix, node: None)
    try:
        yaml.load(path.read_text(encoding="utf-8"), Loader=AnyTagLoader)  # noqa: S506 (constructs nothing)
    except yaml.YAMLError as exc:
        raise ValueError(f"not YAML: {_reason(exc)}") from None


def _read_onnx(path: Path) -> None:
    try:
        import onnx
    except ImportError:  # the export paths need onnxruntime, not onnx: then the runtime says it at load
        return
    try:
        onnx.load_model(str(path), load_external_data=False)
    except Exception as exc:  # protobuf's DecodeError and onnx's own errors have no common base here
        raise ValueError(f"not an ONNX model: {_reason(exc)}") from None


SETTINGS = (".json", ".yaml", ".yml")
READERS: dict[str, Callable[[Path], None]] = {
    ".pkl": _read_pickle, ".pickle": _read_pickle, ".pt": _read_torch, ".pth": _read_torch, ".zip": _read_zip,
    ".json": _read_json, ".yaml": _read_yaml, ".yml": _read_yaml, ".onnx": _read_onnx,
}
