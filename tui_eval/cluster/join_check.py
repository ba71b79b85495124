"""Before `ray.init(address=HOST:PORT)`: what ray 2.60 would otherwise find out slowly, checked in seconds.

Left to itself, a join that cannot work waits a long time before it says anything useful:
- a loopback host (127.0.0.1, localhost) is replaced by this machine's network address before Ray dials
  it (`services.resolve_ip_for_localhost`); a cluster that listens on loopback only, as Ray does with
  `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`, is not there, and each of 20 connection attempts waits 40 s;
- a port that answers but is no GCS (the dashboard's, Ray Client's) waits as long;
- a cluster that asks for a token the driver does not send is tried 20 times;
- a driver attaches to a raylet of the cluster running on its own machine (one of this machine's raylet
  processes that the GCS lists alive, whatever address it registered under); with none, Ray polls for
  one for 60 s (`get_node_to_connect_for_driver`).
`ray://` addresses (Ray Client) need none of this: they are only checked to be reachable.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
from collections.abc import Iterator
from typing import Any

from tui_eval.errors import BadInput

REACH_TIMEOUT_S = 5.0
GCS_ANSWER_S = 10.0  # a GCS that accepts connections answers in well under a second


def check_joinable(address: str) -> None:
    """Raise BadInput, in seconds, for a `--ray-address` that ray.init would spin on; make a loopback
    address stay loopback."""
    if address.startswith("ray://"):
        _check_reachable(address, *_host_port(address))
        return
    resolved = _resolved(address)
    if resolved is None:  # `auto` with no cluster found: ray.init says so at once
        return
    host, port = _host_port(resolved)
    _check_reachable(resolved, host, port)
    _keep_loopback(host)
    _check_auth(auto=address == "auto")
    _check_node_here(_alive_nodes(resolved), resolved)


def _host_port(address: str) -> tuple[str, int]:
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise BadInput(f"--ray-address expects auto, HOST:PORT or ray://HOST:PORT, got {address!r}")
    return host.strip("[]"), int(port)


def _resolved(address: str) -> str | None:
    """HOST:PORT as given, or the one `auto` finds (RAY_ADDRESS, else the last `ray start` here)."""
    if address != "auto":
        return address
    from ray._private import services

    try:
        found = services.get_ray_address_from_environment("auto", None)
    except Exception:  # noqa: BLE001  (several running clusters and no record: ray.init says which)
        return None
    return None if found in (None, "auto") else found


def _check_reachable(address: str, host: str, port: int) -> None:
    try:
        socket.create_connection((host, port), timeout=REACH_TIMEOUT_S).close()
    except OSError as exc:
        raise BadInput(f"cannot reach Ray at {address} ({exc.strerror or exc}); is `ray start --head` running "
                       "there, and the port open or forwarded (ssh -L)?") from None


def _keep_loopback(host: str) -> None:
    """Dial the loopback address the user gave (and that answered), not this machine's network address:
    read by Ray at call time, as for the local Ray (tui_eval.local_ray)."""
    from ray._common.network_utils import is_localhost
    from ray._private import ray_constants

    if is_localhost(host):
        ray_constants.ENABLE_RAY_CLUSTER = False


def _check_auth(auto: bool) -> None:
    """The token set-up ray.init makes (an address found by `auto` turns token auth on where a token is
    kept; a named address only with RAY_AUTH_MODE=token), so that the probe below asks as it will."""
    from ray._private.authentication.authentication_token_setup import (
        ensure_token_if_auth_enabled,
        maybe_enable_token_auth_if_token_available,
    )

    if auto:
        maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
    try:
        ensure_token_if_auth_enabled(None, create_token_if_missing=False)
    except Exception as exc:  # noqa: BLE001  (AuthenticationError: RAY_AUTH_MODE=token and no token)
        from tui_eval.errors import first_line

        raise BadInput(f"RAY_AUTH_MODE=token but no Ray token here ({first_line(exc, 100)}); set RAY_AUTH_TOKEN "
                       "to the cluster's token (`ray get-auth-token` on its head)") from None


def _alive_nodes(address: str) -> dict[str, str]:
    """node id (hex) -> the address it registered under, for the cluster's live nodes. The GCS client
    blocks for 40 s on a port that is no GCS: it runs in a thread given GCS_ANSWER_S."""
    outcome: dict[str, Any] = {}

    def ask() -> None:
        try:
            from ray._raylet import GcsClient  # type: ignore[attr-defined]
            from ray.core.generated.gcs_pb2 import GcsNodeInfo  # type: ignore[attr-defined]

            client = GcsClient(address=address)
            infos = client.get_all_node_info(timeout=GCS_ANSWER_S, state_filter=GcsNodeInfo.GcsNodeState.ALIVE)
            outcome["nodes"] = {node_id.hex(): info.node_manager_address for node_id, info in infos.items()}
        except Exception as exc:  # noqa: BLE001  (sorted out below)
            outcome["error"] = exc

    asker = threading.Thread(target=ask, name="tui-eval-gcs-probe", daemon=True)
    with _stderr_dropped(asker):  # Ray's client logs each failed try: the error below says it in one line
        asker.start()
        asker.join(GCS_ANSWER_S)
    if "nodes" in outcome:
        return outcome["nodes"]
    error = outcome.get("error")
    kind = type(error).__name__
    if kind == "AuthenticationError":
        raise BadInput(f"the Ray cluster at {address} refused this run's token (or its lack of one); set "
                       "RAY_AUTH_MODE=token and RAY_AUTH_TOKEN to the cluster's token (`ray get-auth-token` on "
                       "its head)") from None
    from tui_eval.errors import first_line

    why = (f"no answer in {GCS_ANSWER_S:g} s" if error is None else "it answers, but not as Ray's GCS"
           if kind == "RpcError" else first_line(error, 120))
    raise BadInput(f"no Ray GCS answers at {address} ({why}); pass the address `ray start --head` printed "
                   "(port 6379 by default), not the dashboard's or Ray Client's port") from None


@contextlib.contextmanager
def _stderr_dropped(asker: threading.Thread) -> Iterator[None]:
    """File descriptor 2 to /dev/null while `asker` runs (Ray's C++ logging writes there, not to sys.stderr).
    If it still runs after (no answer: the run ends with an error), fd 2 stays dropped and sys.stderr moves
    to the terminal's own descriptor, so that the error is the last line."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
    try:
        yield
    finally:
        if asker.is_alive():
            sys.stderr = os.fdopen(saved, "w", buffering=1)
        else:
            os.dup2(saved, 2)
            os.close(saved)


def _check_node_here(nodes: dict[str, str], address: str) -> None:
    """As ray.init picks the node it attaches to: a raylet process on this machine that the GCS lists."""
    from ray._private import services

    if set(services.find_node_ids()) & set(nodes):
        return
    listed = ", ".join(sorted(set(nodes.values()))[:5]) or "none alive"
    raise BadInput(f"the Ray cluster at {address} has no node on this machine (its nodes: {listed}); a HOST:PORT "
                   f"run starts on a node of the cluster: run it there, add this machine (`ray start --address "
                   f"{address}`), or join through Ray Client (--ray-address ray://HEAD:10001)")
