"""The injected script's parts (human/stealth_*.js): each is one function expression that parses
alone, and the script composed from them adds no global to the page. Judged by a real Chromium."""
from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

from cdp.navigation import navigate
from human import stealth

LEADING_COMMENT = re.compile(r"\A\s*/\*.*?\*/\s*", re.S)
# A page's own global names, then those the script left behind (window.chrome is Chrome's own: the
# script supplies it where headless Chrome lacks it).
GLOBALS = "Object.getOwnPropertyNames(window).filter((n) => n !== 'chrome')"


def part_text(name: str) -> str:
    return resources.files("human").joinpath(name).read_text(encoding="utf-8")


def value(tab: Any, expression: str) -> Any:
    res = tab.run(lambda: tab.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}), 15)
    assert "exceptionDetails" not in res, res
    return res["result"].get("value")


def test_each_part_is_one_function_expression_that_parses_alone(tab: Any) -> None:
    for name in stealth.SCRIPT_PARTS:
        text = part_text(name)
        assert len(text.splitlines()) < 600, name
        body = LEADING_COMMENT.sub("", text).strip()
        assert body.startswith("(function ") and body.endswith("})"), name
        # Parsed as the operand of one return: a second statement or a stray call would not parse,
        # or would print differently from the text between the parentheses.
        probe = (f"(() => {{ const fn = new Function('return (' + {json.dumps(text)} + '\\n)')(); "
                 "return [typeof fn, fn.length, Function.prototype.toString.call(fn)]; })()")
        assert value(tab, probe) == ["function", 1, body[1:-1]], name


def test_the_composed_script_adds_no_global_and_passes_for_native(tab: Any, site: Any, browser: Any) -> None:
    tab.run(lambda: navigate(tab, site.url("form.html"), timeout_s=15), 20)
    before = value(tab, GLOBALS)
    source = stealth.script_source("full", browser.version, force=["plugins", "chrome", "userAgentData"])
    assert source.startswith("(function (cfg) {") and source.rstrip().endswith(f"//# sourceURL={stealth.TOKEN}")
    value(tab, source)
    assert value(tab, GLOBALS) == before
    natives = value(tab, "[navigator.permissions.query, Object.getOwnPropertyDescriptor(Navigator.prototype, "
                         "'plugins').get, HTMLCanvasElement.prototype.toDataURL, chrome.runtime.sendMessage]"
                         ".map((f) => Function.prototype.toString.call(f))")
    assert natives == ["function query() { [native code] }", "function get plugins() { [native code] }",
                       "function toDataURL() { [native code] }", "function sendMessage() { [native code] }"]
    assert value(tab, "navigator.plugins.length") == 5 and value(tab, "Object.keys(navigator).length") == 0


def test_the_parts_are_read_and_composed_once_per_process() -> None:
    assert stealth._script_frame() is stealth._script_frame()
    a, b = (stealth.script_source("light", "Chrome/156.0.8078.79") for _ in range(2))
    assert a == b and '"level":"light"' in a and "/*@config*/" not in a
    for name in stealth.SCRIPT_PARTS:
        assert LEADING_COMMENT.sub("", part_text(name)).strip() in a, name


def test_the_audio_fingerprint_moves_for_every_session_seed(tab: Any, site: Any, browser: Any) -> None:
    # The fingerprint sites take: the sum of the magnitudes of samples 4500-5000 of a rendered
    # signal. Each seed is a session of its own (a same-origin frame with the script at that seed);
    # a noise whose nudges cancelled in that sum would leave it native for some of them.
    tab.run(lambda: navigate(tab, site.url("form.html"), timeout_s=15), 20)
    source = stealth.script_source("full", browser.version)
    assert f'"seed":{stealth.NOISE_SEED}' in source
    seeds = [stealth.NOISE_SEED, *range(1, 60)]
    probe = """(async (sources) => {
      const sum = async (win) => {
        const ctx = new win.OfflineAudioContext(1, 5000, 44100);
        const osc = ctx.createOscillator();
        osc.type = 'triangle'; osc.frequency.value = 10000;
        const comp = ctx.createDynamicsCompressor();
        osc.connect(comp); comp.connect(ctx.destination); osc.start(0);
        const samples = (await ctx.startRendering()).getChannelData(0);
        let s = 0;
        for (let i = 4500; i < 5000; i++) s += Math.abs(samples[i]);
        return s;
      };
      const native = await sum(window);
      const out = [];
      for (const src of sources) {
        const frame = document.createElement('iframe');
        document.body.appendChild(frame);
        frame.contentWindow.eval(src);
        out.push((await sum(frame.contentWindow)) !== native);
        frame.remove();
      }
      return out;
    })"""
    sources = [source.replace(f'"seed":{stealth.NOISE_SEED}', f'"seed":{seed}') for seed in seeds]
    res = tab.run(lambda: tab.call("Runtime.evaluate", {"expression": f"{probe}({json.dumps(sources)})",
                                                        "awaitPromise": True, "returnByValue": True}), 60)
    assert "exceptionDetails" not in res, res
    moved = res["result"]["value"]
    assert moved == [True] * len(seeds), [s for s, m in zip(seeds, moved, strict=True) if not m]
