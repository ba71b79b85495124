"""The export's deployment contract, where it disagrees with the env, as the doctor's findings.

The contract (tui_eval/envs/contract.py, kept in the run's log) is what the robot's deploy code is written
from. An item that disagrees with the env the policy was trained in is a finding whether or not the run's paths
diverge: a deploy that follows the contract drives the robot otherwise (other gains, another default pose, actions
scaled otherwise, joints in another order, observations built otherwise). Items that change what the robot does with
an action rank first, above every finding of the run's paths; a command name that differs ranks low.
"""

from __future__ import annotations

from typing import Any

from tui_eval.doctor.findings import Finding
from tui_eval.envs.contract import ACTING

TOPIC = "deployment contract"
ACTS, SAYS = 900, 40  # above any proven finding of the paths (200) / below the rules' consistent ones (50)


def _short(value: Any, limit: int = 120) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: a contract item and the probes' topic that proves the same mistake on the paths (the finding is then joined)
SAME_TOPIC = {"normalizer": "normalizer", "action scale": "actions", "observation terms": "observation order"}


def join_contract(findings: list[Finding], contract: dict[str, Any] | None, paths: list[str]) -> None:
    """The contract's findings first; an item whose mistake a probe already proved on the paths joins that finding
    (one cause, two pieces of evidence), which then ranks first."""
    for found in reversed(contract_findings(contract, paths)):
        item = found.cause.split("states the ", 1)[1].split(" otherwise", 1)[0]
        proved = next((f for f in findings if SAME_TOPIC.get(item) == f.topic), None)
        if proved is not None:
            proved.evidence += f"; the export's deployment contract says so too: {found.evidence}"
            proved.score = max(proved.score, found.score)
            findings.remove(proved)
            findings.insert(0, proved)
        else:
            findings.insert(0, found)


def contract_findings(contract: dict[str, Any] | None, paths: list[str]) -> list[Finding]:
    """One finding per item the export states otherwise than the env, best first."""
    if not contract:
        return []
    found = []
    for item in contract.get("items", []):
        if item["ok"]:
            continue
        acting = item["name"] in ACTING
        found.append(Finding(
            cause=f"the export's deployment contract states the {item['name']} otherwise than the env the policy was "
                  f"trained in ({item.get('note', '')})",
            evidence=f"export: {_short(item['export'])}; env: {_short(item['env'])} ({contract['source']})",
            fix=_fix(contract, item["name"]),
            paths=paths, stage="contract", seed=None, step=None, score=ACTS if acting else SAYS, topic=TOPIC))
    return sorted(found, key=lambda f: -f.score)


def _fix(contract: dict[str, Any], item: str) -> str:
    """The fix in the terms of the library that wrote the export (the contract's own), else in ours."""
    if contract.get("fix"):
        return str(contract["fix"]).format(item=item)
    return (f"export again so that the contract is written from the env the policy trained in, or write the deploy "
            f"code's {item} from the env's values")
