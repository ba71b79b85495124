"""What the terminal says it can draw, asked before Textual owns it: its version (XTVERSION), its sixel colour
registers (XTSMGRAPHICS), whether it answers a kitty graphics query, and its attributes (DA1, asked last:
every terminal answers it, so its reply ends the wait). `pick_renderer` turns the answers into a renderer and
the reason the frame panel's header shows."""

from __future__ import annotations

import os
import re
import select
import time
from collections.abc import Mapping
from dataclasses import dataclass

QUERIES = "\033[>0q" "\033[?1;1;0S" "\033_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\033\\" "\033[c"
KITTY_PLACEHOLDERS = (0, 28)  # kitty draws Unicode-placeholder placements (U=1) from 0.28 on
MIN_SIXEL_COLOURS = 16  # fewer registers than this: half blocks look better


@dataclass(frozen=True)
class TerminalAnswers:
    attributes: tuple[int, ...] | None = None  # DA1's, None when the terminal did not answer
    registers: int | None = None  # sixel colour registers (XTSMGRAPHICS)
    version: str | None = None  # XTVERSION, e.g. "XTerm(379)", "kitty(0.26.5)"
    kitty_graphics: bool = False  # it answered the graphics query with OK

    @property
    def sixel(self) -> bool:
        return self.attributes is not None and 4 in self.attributes


def parse_answers(reply: str) -> TerminalAnswers:
    da1 = re.search(r"\033\[\?([\d;]*)c", reply)
    registers = re.search(r"\033\[\?1;0;(\d+)S", reply)
    version = re.search(r"\033P>\|(.*?)\033\\", reply)
    return TerminalAnswers(
        attributes=tuple(int(a) for a in da1.group(1).split(";") if a) if da1 else None,
        registers=int(registers.group(1)) if registers else None,
        version=version.group(1) if version else None,
        kitty_graphics=bool(re.search(r"\033_Gi=31;OK\033\\", reply)))


def ask_terminal(timeout: float = 1.5) -> TerminalAnswers | None:
    """The terminal's answers (None without a terminal to ask); keys typed meanwhile are lost."""
    import termios
    import tty

    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return None
    try:
        saved = termios.tcgetattr(fd)
        tty.setraw(fd)
        try:
            os.write(fd, QUERIES.encode())
            return parse_answers(_read_until_da1(fd, timeout))
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
    except (OSError, termios.error):
        return None
    finally:
        os.close(fd)


def _read_until_da1(fd: int, timeout: float) -> str:
    reply, deadline = b"", time.monotonic() + timeout
    while not re.search(rb"\033\[\?[\d;]*c", reply):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        reply += os.read(fd, 4096)
    return reply.decode(errors="replace")


def _kitty_version(version: str | None) -> tuple[int, ...] | None:
    match = re.fullmatch(r"kitty\((\d+)\.(\d+)(?:\.(\d+))?\)", version or "")
    return tuple(int(p or 0) for p in match.groups()) if match else None


def pick_renderer(answers: TerminalAnswers | None, env: Mapping[str, str]) -> tuple[str, str]:
    """(renderer, why): kitty graphics where kitty can draw the form sent, sixel where the terminal says it has
    it, else half blocks (tmux, screen and a terminal that answers nothing get them)."""
    if env.get("TMUX"):
        return "halfblock", "inside tmux, which passes no graphics on"
    if env.get("STY"):
        return "halfblock", "inside GNU screen, which passes no graphics on"
    if answers is None or answers.attributes is None:
        return "halfblock", "the terminal did not answer the query for graphics"
    name = answers.version or "the terminal"
    kitty = _kitty_version(answers.version)
    if answers.kitty_graphics and kitty is not None:
        if kitty >= KITTY_PLACEHOLDERS:
            return "kitty", f"{name}: kitty graphics with Unicode placeholders"
        if not answers.sixel:
            return "halfblock", (f"{name} draws kitty graphics but not Unicode placeholders (kitty 0.28+), "
                                 "which the kitty renderer sends")
    if answers.sixel:
        registers = answers.registers
        if registers is not None and registers < MIN_SIXEL_COLOURS:
            return "halfblock", f"{name} has sixel with only {registers} colour registers"
        said = f"{registers} colour registers" if registers else "colour registers not said (256 assumed)"
        return "sixel", f"{name} answered the query for sixel, {said}"
    return "halfblock", f"{name} answered with no graphics this app can send"
