"""`e`: the run's records and summary as CSV and JSON, next to the run log. Plain Python, no Textual.

Streams the log in chunks (memory stays flat for a million episodes) up to the last record present
when the export starts, and builds the summary from exactly the exported records (summary.replay), so
the files agree with each other and with the log.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from tui_eval.log.store import RunLog
from tui_eval.views.summary import build_summary, json_clean, replay

CHUNK = 20_000
# the reward terms (one per task) are in the JSON export; the term that ended an episode is one column
CSV_FIELDS = ("path", "seed", "block", "return", "length", "success", "invalid", "reason", "wall_s", "explore",
              "termination")


def export_paths(log_path: str | Path) -> tuple[Path, Path]:
    base = Path(log_path)
    stem = base.with_suffix("") if base.suffix == ".sqlite" else base
    return Path(f"{stem}.export.csv"), Path(f"{stem}.export.json")


def _chunks(log: RunLog, last_id: int):
    after = 0
    while after < last_id:
        rows = list(log.records_with_ids(after_id=after, limit=CHUNK))
        if not rows:
            return
        rows = [(i, r) for i, r in rows if i <= last_id]
        if not rows:
            return
        after = rows[-1][0]
        yield [r for _, r in rows]


def export_run(log_path: str | Path, throughput: dict[str, tuple[float, float]] | None = None
               ) -> tuple[Path, Path, int]:
    """Write `<log>.export.csv` and `<log>.export.json`; returns their paths and the record count."""
    csv_path, json_path = export_paths(log_path)
    log = RunLog(log_path, readonly=True)
    try:
        meta = log.meta()
        last = log.last_id()  # what arrives during the export is left for the next one
        stats = replay(meta, [])
        count = 0
        tmp_csv = csv_path.with_name(csv_path.name + ".tmp")
        with tmp_csv.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=CSV_FIELDS, extrasaction="ignore")
            writer.writeheader()
            for chunk in _chunks(log, last):
                for rec in chunk:
                    if rec.path in stats.paths:
                        stats.add(rec)
                    writer.writerow(rec.to_json())
                count += len(chunk)
        summary: dict[str, Any] = build_summary(meta, stats, [], throughput)
        summary.pop("episodes", None)
        summary["log"] = str(log_path)
        summary["exported_records"] = count
        head = json.dumps(json_clean(summary), indent=1)
        tmp_json = json_path.with_name(json_path.name + ".tmp")
        with tmp_json.open("w") as fh:
            fh.write(head[: head.rstrip().rfind("}")].rstrip() + ',\n "episodes": [')
            first = True
            for chunk in _chunks(log, last):
                for rec in chunk:
                    fh.write(("\n  " if first else ",\n  ") + json.dumps(json_clean(rec.to_json())))
                    first = False
            fh.write("\n ]\n}\n")
        tmp_csv.replace(csv_path)
        tmp_json.replace(json_path)
        return csv_path, json_path, count
    finally:
        log.close()
