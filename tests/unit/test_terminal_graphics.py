"""Frames drawn with terminal graphics: sixel data sent palette first (tui_eval/frames/sixel.py), and the renderer
picked from what the terminal answers (tui_eval/ui/terminal_query.py), on the answers real xterm 379 and kitty
0.26.5 gave (the real terminals themselves: tests/e2e/test_real_terminals.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tui_eval.frames.sixel import palette_first
from tui_eval.ui.terminal_query import parse_answers, pick_renderer

XTERM = "\033P>|XTerm(379)\033\\\033[?1;0;1024S\033[?63;1;2;4;6;9;15;16;22;28c"
KITTY_026 = "\033P>|kitty(0.26.5)\033\\\033_Gi=31;OK\033\\\033[?62;c"
KITTY_035 = "\033P>|kitty(0.35.2)\033\\\033_Gi=31;OK\033\\\033[?62;c"
PLAIN = "\033[?1;2c"  # a VT100-like answer: no graphics


def decode(data: str) -> np.ndarray:
    """The picture one sixel image means: each pixel in its register's colour when it was drawn. (What xterm 379
    makes of registers defined between bands is not this: tests/e2e/test_real_terminals.py shows it.)"""
    body = data[data.index("q") + 1:]
    body = re.sub(r'^"\d+;\d+;\d+;\d+', "", body).removesuffix("\033\\")
    palette: dict[int, tuple[int, ...]] = {}
    drawn: dict[tuple[int, int], tuple[int, ...]] = {}
    x = band = register = 0
    for token in re.finditer(r"#(\d+)(?:;2;(\d+);(\d+);(\d+))?|!(\d+)(.)|([?-~])|(\$)|(-)", body):
        number, r, g, b, count, repeated, single, cr, lf = token.groups()
        if number is not None:
            register = int(number)
            if r is not None:
                palette[register] = (int(r), int(g), int(b))
        elif lf:
            x, band = 0, band + 1
        elif cr:
            x = 0
        else:
            char, times = (repeated, int(count)) if count else (single, 1)
            bits = ord(char) - 63
            for dx in range(times):
                for bit in range(6):
                    if bits >> bit & 1:
                        drawn[(band * 6 + bit, x + dx)] = palette[register]
            x += times
    height, width = max(y for y, _ in drawn) + 1, max(x for _, x in drawn) + 1
    picture = np.zeros((height, width, 3), dtype=int)
    for (y, col), colour in drawn.items():
        picture[y, col] = colour
    return picture


@pytest.fixture(scope="module")
def lunar_sixels() -> str:
    """textual-image's sixel encoding of a real LunarLander frame (the registers defined between bands)."""
    import gymnasium as gym
    from PIL import Image
    from textual_image._sixel import image_to_sixels

    env = gym.make("LunarLander-v3", render_mode="rgb_array")
    env.reset(seed=11)
    for _ in range(30):
        env.step(0)
    return image_to_sixels(Image.fromarray(env.render()).resize((300, 200)))


def test_palette_first_defines_every_colour_before_the_first_pixel_and_draws_the_same_picture(lunar_sixels):
    rewritten = palette_first(lunar_sixels)
    body = rewritten[rewritten.index("q") + 1:]
    definitions = [m.start() for m in re.finditer(r"#\d+;2;", body)]
    pixels = [m.start() for m in re.finditer(r"#\d+(?![\d;])", body)]
    assert definitions and max(definitions) < min(pixels)  # every definition before the first selection
    assert re.search(r"#\d+;2;", lunar_sixels.split("-", 1)[1])  # the encoder's: defined between bands
    assert np.array_equal(decode(rewritten), decode(lunar_sixels))


def test_a_register_reused_for_another_colour_gets_a_register_of_its_own():
    data = '\033P0;1;0q"1;1;4;12#1;2;100;0;0!4~-#1;2;0;0;100!4~\033\\'
    rewritten = palette_first(data)
    assert rewritten.count(";2;") == 2 and rewritten.index("#1;2;0;0;100") < rewritten.index("~")
    assert np.array_equal(decode(rewritten), decode(data))
    assert decode(rewritten)[0, 0].tolist() == [100, 0, 0] and decode(rewritten)[6, 0].tolist() == [0, 0, 100]


def test_terminal_answers_are_read_from_real_replies():
    xterm, kitty, plain = parse_answers(XTERM), parse_answers(KITTY_026), parse_answers(PLAIN)
    assert xterm.sixel and xterm.registers == 1024 and xterm.version == "XTerm(379)" and not xterm.kitty_graphics
    assert kitty.kitty_graphics and not kitty.sixel and kitty.version == "kitty(0.26.5)"
    assert plain.attributes == (1, 2) and not plain.sixel and plain.version is None
    assert parse_answers("").attributes is None


@pytest.mark.parametrize("reply, env, renderer, says", [
    (XTERM, {}, "sixel", "XTerm(379) answered the query for sixel, 1024 colour registers"),
    (KITTY_026, {}, "halfblock", "not Unicode placeholders (kitty 0.28+)"),
    (KITTY_035, {}, "kitty", "Unicode placeholders"),
    (PLAIN, {}, "halfblock", "no graphics"),
    ("", {}, "halfblock", "did not answer"),
    (XTERM, {"TMUX": "/tmp/tmux-0/default,1,0"}, "halfblock", "tmux"),
    (XTERM, {"STY": "1.pts-0"}, "halfblock", "screen"),
    (XTERM.replace("1024S", "8S"), {}, "halfblock", "only 8 colour registers"),
])
def test_the_renderer_is_what_the_terminal_can_draw_and_says_why(reply, env, renderer, says):
    chosen, why = pick_renderer(parse_answers(reply) if reply else None, env)
    assert chosen == renderer and says in why
