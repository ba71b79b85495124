"""The run's side of a path that runs in a process of its own (tui_eval/isolation/child.py).

Why: paths must not share process-wide state. Python's `random`, NumPy's and torch's global generators, and
native simulator contexts that are not thread-safe (MuJoCo-Warp crashes when two threads step it) are per
process; two paths as threads of one process draw from one stream and may enter one simulator at once. So every
path but one runs in a process of its own (the run's process hosts the first path, which shares it with
nobody; `--in-process` puts every path there, as threads).

Seeds flow as to a Ray worker (cluster/remote_path.py), on one pipe: the child holds at most as many seeds as it has
envs plus `BLOCK` waiting ones, so a pause leaves little to hand back; records come back as they finish (those that
finish within a few milliseconds of each other in one message, as tuples: record_wire.py) and are emitted here, in
the process that owns the log. A child that dies (a segfault in a simulator, killed) or whose path fails raises from
`run`: the engine hands its unfinished seeds out again and loads the path afresh (a new process). A step that froze
(`--step-timeout`, watched in the child) has its episode recorded invalid and the child replaced the same way.
Closing ends the child within `CLOSE_S` whatever it is doing, so that `stop` stays prompt during loading and on a
busy machine.
"""

from __future__ import annotations

import atexit
import itertools
import os
import queue
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Listener
from pathlib import Path
from typing import Any

from tui_eval.config.spec import RunSpec
from tui_eval.cpu_pools import limit_native_pools
from tui_eval.errors import BadInput
from tui_eval.feed import Seed, SeedFeed
from tui_eval.frames.hub import FrameHub, PathTap
from tui_eval.isolation import forked
from tui_eval.isolation.forked import ZygoteGone, close_ends, end_session, end_zygote, wait_quietly, zygote
from tui_eval.isolation.pace import AHEAD_S, EpisodeRate
from tui_eval.isolation.record_wire import decode
from tui_eval.paths.base import Emit, InferencePath
from tui_eval.records import EpisodeRecord

#: seeds waiting in the child beyond its envs, at least as many as it has envs: a batched simulator (one seed per
#: batch of worlds) starts its next batch with the seeds it holds, and a batch short of seeds steps idle worlds
BLOCK = 4
LOAD_TIMEOUT_S = 900.0  # imports and restore in the child (RLlib's evaluate starts a Ray of its own)
REPLY_S = 5.0  # set_explore's answer: a live child answers in milliseconds (set_explore waits for an episode)
HOLD_S = 5.0  # a pause waits this long for the child's answer (a later one is taken by the run loop)
CLOSE_S = 3.0  # a child that has not ended this long after close is terminated, then killed
WANTED_S = 0.2  # how often the run's frame wishes are sent while a viewer wants frames


@dataclass
class Interpreter:
    """A path's process before it is told which path to build, connecting to `listener` (a socket readable by this
    user only, with a key), in a session of its own (a terminal's hangup or Ctrl-C is the run's to handle), its output
    into a file. Never a fork of the run's process (its threads, locks and Ray state stay here): on Linux a fork of the
    zygote (a pristine interpreter that imported the heavy libraries once: tui_eval/isolation/zygote.py), elsewhere
    a fresh interpreter."""

    folder: str
    listener: Listener
    process: Any  # subprocess.Popen, or forked.ForkedProcess
    output_file: str

    @classmethod
    def start(cls, warm: tuple[str, ...] = ()) -> Interpreter:
        folder = tempfile.mkdtemp(prefix="tui-eval-path-")
        key = secrets.token_bytes(16)
        listener = Listener(os.path.join(folder, "socket"), family="AF_UNIX", authkey=key)
        output_file = os.path.join(tempfile.gettempdir(), f"tui-eval-path-{os.getpid()}-{next(_numbers)}.log")
        if FORKS:
            try:
                return cls(folder, listener, zygote(warm or _warm_modules).fork(str(listener.address), key.hex(),
                                                                                 output_file), output_file)
            except ZygoteGone:  # a fresh interpreter then; the next path tries a new zygote
                end_zygote()
        package_root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ, TUI_EVAL_PATH_KEY=key.hex(),
                   PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))
        limit_native_pools(env)  # two path processes on 2 cores: 1,252 env steps/s with default pools, 6,074 limited
        with open(output_file, "ab") as output:
            process = subprocess.Popen(
                [sys.executable, "-m", "tui_eval.isolation.child", str(listener.address), ",".join(warm)],
                env=env, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
        return cls(folder, listener, process, output_file)

    def end(self) -> None:
        end_session(self.process.pid)
        if self.process.poll() is None:
            self.process.kill()
            wait_quietly(self.process, 1.0)
        try:
            self.listener.close()
        except FileNotFoundError:  # ended from two threads at once (a check closed by its run as it finishes)
            pass
        shutil.rmtree(self.folder, ignore_errors=True)
        if self.process.poll() is not None:
            forked.remove_output(self.output_file)


#: path processes are forked from a zygote (Linux; TUI_EVAL_SPAWN_PATHS=1: a fresh interpreter each, as elsewhere)
FORKS = sys.platform.startswith("linux") and os.environ.get("TUI_EVAL_SPAWN_PATHS", "") in ("", "0")
_numbers = itertools.count()
_warm: list[Interpreter] = []  # started ahead by `start_ahead` where paths are not forked, taken by the next paths
_warm_modules: tuple[str, ...] = ("torch", "gymnasium")  # what the zygote imports, as the last run planned said


def start_ahead(count: int, warm: tuple[str, ...]) -> None:
    """Get path processes ready while the run still plans, importing `warm` (~7 s for RLlib here, overlapping the
    planning): the zygote that forks them, else `count` fresh interpreters waiting (those already waiting count: a
    process that plans many runs keeps at most `count` idle). Those left untaken end at exit."""
    global _warm_modules
    _warm_modules = warm
    if FORKS:
        if zygote(warm).warm == warm:  # one this call started (or like it)
            atexit.unregister(end_zygote)
            atexit.register(end_zygote)
        return
    if not _warm:
        atexit.register(end_untaken)
    alive = [i for i in _warm if i.process.poll() is None]
    for interpreter in _warm:
        if interpreter not in alive:
            interpreter.end()
    _warm[:] = alive + [Interpreter.start(warm) for _ in range(count - len(alive))]


def take_interpreter(warm: tuple[str, ...] = ()) -> Interpreter:
    """A path's process: one started ahead, else a new one (forked from a zygote that imported `warm`, where none
    is alive yet)."""
    while _warm:
        interpreter = _warm.pop(0)
        if interpreter.process.poll() is None:
            return interpreter
        interpreter.end()
    return Interpreter.start(warm)


def end_untaken() -> None:
    """End the interpreters started ahead and not taken (a plan that failed, or a process that plans no more)."""
    while _warm:
        _warm.pop().end()


class PathProcessDied(RuntimeError):
    """The path's process ended without being asked to (a crash in native code, killed, out of memory)."""


class ProcessPath(InferencePath):
    def __init__(self, spec: RunSpec, name: str, explore: bool, setup: dict[str, Any], wait: bool = True):
        """Start the child; with `wait`, return once it has loaded the path (else `wait_loaded` does)."""
        self.name, self.explore = name, explore
        self.description = "loading in a process of its own"
        interpreter = take_interpreter()
        self._folder, self._listener, self._process = interpreter.folder, interpreter.listener, interpreter.process
        self.output_file = interpreter.output_file
        self._hello = ("build", spec, name, explore, dict(setup, sys_path=[p for p in sys.path if p]))
        self._conn: Any = None
        self._send_lock = threading.Lock()
        self._replies: dict[int, Any] = {}
        self._reply_ready = threading.Condition()
        self._ids = itertools.count()
        self._inbox: queue.Queue[tuple[Any, ...]] = queue.Queue()
        self._loaded = threading.Event()
        self._load_answer: tuple[Any, ...] | None = None
        self._outstanding: set[Seed] = set()  # offered to the child, not recorded nor handed back yet
        self._outstanding_lock = threading.Lock()
        self._handing = threading.Lock()  # a hold falls between two offers, never between a seed's take and offer
        self._late_holds: set[int] = set()  # holds not answered in time: their seeds are handed back later
        self._capacity = 1
        self._rate = EpisodeRate()  # the pace at which the child ends episodes: how far ahead it is offered seeds
        self._told_dry = False  # the child was told that no seed follows its last offer (until the next)
        self._feed: Any = None
        self._tap: PathTap | None = None
        self._hub: FrameHub | None = None
        self._closed = False
        self._gone = False  # the pipe closed: the child ended
        threading.Thread(target=self._read, name=f"path-{name}-pipe", daemon=True).start()
        if wait:
            self.wait_loaded()

    # ------------------------------------------------------------------ the pipe
    def _send(self, *message: Any) -> None:
        with self._send_lock:
            try:
                if self._conn is not None:
                    self._conn.send(message)
            except (OSError, ValueError):  # the child is gone: the run loop sees it
                pass

    def _read(self) -> None:
        try:
            conn = self._listener.accept()
            conn.send(self._hello)
        except (OSError, EOFError):  # closed before the child connected (it died, or the run closed it)
            conn = None
        self._conn = conn
        while conn is not None:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            kind = message[0]
            if kind == "reply":
                with self._reply_ready:
                    self._replies[message[1]] = message[2]
                    self._reply_ready.notify_all()
            elif kind in ("loaded", "load_failed"):
                self._load_answer = message
                self._loaded.set()
            elif kind == "frames":
                self._take_frames(message[1])
            elif kind == "activity":
                self._doing = message[1]
            else:
                self._inbox.put(message)
        self._gone = True
        self._loaded.set()
        self._inbox.put(("gone",))
        with self._reply_ready:
            self._reply_ready.notify_all()

    def _call(self, command: str, *args: Any, timeout: float = REPLY_S) -> Any:
        ident = next(self._ids)
        self._send(command, ident, *args)
        return self._answer(ident, command, timeout)

    def _answer(self, ident: int, command: str, timeout: float = REPLY_S) -> Any:
        deadline = time.monotonic() + timeout
        with self._reply_ready:
            while ident not in self._replies and not self._gone:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"the {self.name} path's process did not answer {command} in {timeout:g}s")
                self._reply_ready.wait(left)
            if ident not in self._replies:
                raise PathProcessDied(self._death())
            return self._replies.pop(ident)

    def _death(self) -> str:
        try:
            code: int | None = self._process.wait(0.5)
        except subprocess.TimeoutExpired:
            code = None
        if code is not None and code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"ended (exit code {code})"
        return f"the {self.name} path's process {how}; {forked.output_note(self.output_file)}"

    # ------------------------------------------------------------------ loading
    def wait_loaded(self) -> None:
        deadline = time.monotonic() + LOAD_TIMEOUT_S
        while not self._loaded.wait(0.1):  # a child that dies before it connects never answers: look at it
            if self._process.poll() is not None and not self._loaded.wait(0.5):
                self.close()
                raise PathProcessDied(self._death())
            if time.monotonic() > deadline:
                self.close()
                raise TimeoutError(f"the {self.name} path did not load within {LOAD_TIMEOUT_S:g}s")
        answer = self._load_answer
        if answer is None:
            self.close()
            raise PathProcessDied(self._death())
        if answer[0] == "load_failed":
            self.close()
            raise (BadInput if answer[3] else RuntimeError)(answer[1])
        info = answer[1]
        self._capacity = max(1, int(info["capacity"]))
        self.description = f"{info['description']}; in a process of its own (pid {info['pid']})"
        self.frames_problem = info.get("frames_problem")
        self.placement = ()

    def activity(self) -> str | None:
        return self._doing

    @property
    def pid(self) -> int | None:
        return self._process.pid

    # ------------------------------------------------------------------ running
    def run(self, feed: SeedFeed, emit: Emit) -> None:
        self.wait_loaded()
        self._feed = feed
        self._tap = getattr(feed, "frames", None)
        self._hub = None if self._tap is None else self._tap.hub
        next_wanted = 0.0
        dry = False
        try:
            while not feed.cancelled:
                next_wanted = self._send_wanted(next_wanted)  # before seeds: the envs reset knowing what to show
                with self._handing:
                    dry = self._top_up(feed) or dry
                self._late_holds_answered()
                if dry and not self._outstanding:
                    return
                try:
                    message = self._inbox.get(timeout=0.05)
                except queue.Empty:
                    continue
                self._receive(message, emit)
            self._send("cancel")
        finally:
            self._feed = None

    def _top_up(self, feed: SeedFeed) -> bool:
        """Offer seeds while the child is short of work; True when the feed had none left to give."""
        seeds: list[Seed] = []
        ahead = max(BLOCK, self._capacity, self._rate.seeds_for(AHEAD_S))
        if len(self._outstanding) > self._capacity + ahead // 2:  # offers in lumps: each wakes the child's reader
            return False
        while len(self._outstanding) + len(seeds) < self._capacity + ahead:
            seed = feed.take()
            if seed is None:
                if seeds:  # the child need not hurry its records for more seeds: said with the offer, one message
                    self._offer(seeds, dry=True)
                elif not self._told_dry:
                    self._told_dry = True
                    self._send("dry")
                return True
            seeds.append(seed)
        if seeds:
            self._offer(seeds)
        return False

    def _offer(self, seeds: list[Seed], dry: bool = False) -> None:
        with self._outstanding_lock:
            self._outstanding.update(seeds)
        self._told_dry = dry
        self._send("offer", seeds, dry)

    def _receive(self, message: tuple[Any, ...], emit: Emit) -> None:
        if message[0] == "gone":
            self._inbox.put(message)  # every later look sees it too
            raise PathProcessDied(self._death())
        _, rows, error, frozen = message
        self._rate.add(len(rows))
        for record in decode(rows):
            key = (record.seed, record.block)
            if self._claim(key):  # handed back at a pause and then started anyway: never counted twice
                emit(record)
        if frozen is not None:
            seed, block, why = frozen
            if self._claim((seed, block)):
                emit(EpisodeRecord(path=self.name, seed=seed, block=block, ret=0.0, length=0, success=False,
                                   invalid=True, reason=why, explore=self.explore))
            raise RuntimeError(f"{why}; the path is loaded afresh in a new process")
        if error is not None:
            raise RuntimeError(error[0])

    def _claim(self, key: Seed) -> bool:
        """True once for a seed offered and not yet recorded or handed back (it is no longer outstanding)."""
        with self._outstanding_lock:
            if key in self._outstanding:
                self._outstanding.remove(key)
                return True
            return False

    def _send_wanted(self, next_at: float) -> float:
        """The run's frame wishes, a few times a second while a viewer wants frames."""
        hub, tap = self._hub, self._tap
        now = time.monotonic()
        if hub is None or tap is None or now < next_at or not hub.active:
            return next_at
        from tui_eval.isolation.frames_relay import wanted

        self._send("frames", wanted(hub, tap))
        return now + WANTED_S

    def _take_frames(self, news: tuple[Any, ...]) -> None:
        hub, tap = self._hub, self._tap
        if hub is not None and tap is not None:
            from tui_eval.isolation.frames_relay import receive

            receive(hub, tap, news)

    # ------------------------------------------------------------------ control
    def hold(self) -> None:
        """The child starts nothing more; the seeds it had not started are handed back to the feed (a late
        answer's, once it comes: the run loop looks for it)."""
        with self._handing:
            ident = next(self._ids)
            self._send("hold", ident)
        try:
            self._give_back(self._answer(ident, "hold", HOLD_S))
        except TimeoutError:
            with self._reply_ready:
                self._late_holds.add(ident)
        except PathProcessDied:  # the run loop sees a dead child and replaces it
            pass

    def _late_holds_answered(self) -> None:
        if not self._late_holds:  # the run loop's every pass: no lock while no hold is late
            return
        with self._reply_ready:
            answered = self._late_holds & self._replies.keys()
            self._late_holds -= answered
            answers = [self._replies.pop(ident) for ident in answered]
        for unstarted in answers:
            self._give_back(unstarted)

    def _give_back(self, unstarted: list[Any]) -> None:
        unstarted = [key for key in (tuple(s) for s in unstarted) if self._claim(key)]
        feed = self._feed
        if feed is not None and unstarted:
            feed.give_back(unstarted)

    def release(self) -> None:
        self._send("release")

    def set_explore(self, explore: bool) -> None:
        self.explore = explore
        self._call("set_explore", explore, timeout=LOAD_TIMEOUT_S)

    def close(self) -> None:
        """End the child: asked first (its libraries close their envs and Ray), then terminated, then killed."""
        if self._closed:
            return
        self._closed = True
        process = self._process
        loaded = self._load_answer is not None and self._load_answer[0] == "loaded"
        if loaded and process.poll() is None:
            try:
                self._call("close", timeout=CLOSE_S)
            except Exception:  # stuck in a step: it is ended below
                pass
            wait_quietly(process, 1.0)
        if process.poll() is None:
            process.terminate()
            wait_quietly(process, CLOSE_S)
        if process.poll() is None:
            process.kill()
            wait_quietly(process, 1.0)
        close_ends(self._conn, self._listener)
        shutil.rmtree(self._folder, ignore_errors=True)
        if process.poll() is not None:
            forked.remove_output(self.output_file)

