"""Seeded random generator of Go templates and YAML parameters for the conformance corpus
and the differential test. Mostly well-formed templates over a known parameter set, with
a share of deliberately broken ones so every error family keeps being exercised."""

from __future__ import annotations

import random
from typing import ClassVar

DEFAULT_SEED = 20261121
DEFAULT_COUNT = 600

KEYS = ["a", "b", "c", "n", "s", "l", "m", "f", "t", "z"]
WORDS = ["x", "hello", "", "héllo", "a b", "<&>", "'q'", '"dq"', "50%", "tab\t", "☃"]
FLOATS = [0.0, 0.5, 1.0, 2.5, -1.5, 1e21, 1e-7, 123456789.0, 100000.0, 1e6, 3.14159]
INTS = [0, 1, 2, 3, -1, 42, 255, 1000000]
FORMATS = [
    "%v",
    "%d",
    "%s",
    "%q",
    "%x",
    "%X",
    "%5v|",
    "%-5v|",
    "%05d",
    "%.2f",
    "%e",
    "%g",
    "%t",
    "%T",
    "%+v",
    "%#v",
    "%c",
    "%U",
    "%o",
    "%b",
    "%8.3f",
    "%%",
    "%v %v",
    "%d-%s",
    "%[2]v%[1]v",
    "%*d",
    "%.1s",
    "%!",
    "%",
    "%z",
    "% x",
    "%#x",
    "%+d",
    "%10.4v|",
    "%-8q|",
    "%.0f",
]
FUNCS = [
    "and",
    "or",
    "not",
    "len",
    "index",
    "slice",
    "print",
    "printf",
    "println",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "html",
    "js",
    "urlquery",
    "call",
]
TEXTS = ["x", " ", "\n", "ab\n", "-", "%", "{", "}", "é", "  \n  ", "\t", "line\n", ":", "|"]


def _yaml_scalar(v: object) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        text = repr(v)
        if "e" in text:
            mant, exp = text.split("e")
            if "." not in mant:
                mant += ".0"
            sign = "-" if exp.startswith("-") else "+"
            text = f"{mant}e{sign}{exp.lstrip('+-')}"
        return text
    assert isinstance(v, str)
    out = ['"']
    for ch in v:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\n":
            out.append("\\n")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def to_yaml(v: object) -> str:
    """Flow-style YAML that PyYAML and yaml.v3 decode to the same values."""
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {to_yaml(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(to_yaml(x) for x in v) + "]"
    return _yaml_scalar(v)


class Gen:
    def __init__(self, rng: random.Random) -> None:
        self.r = rng

    # -- parameters -----------------------------------------------------------------
    def value(self, depth: int) -> object:
        r = self.r
        kind = r.choice("iifsssbnlmm" if depth < 2 else "iifssbn")
        if kind == "i":
            return r.choice(INTS)
        if kind == "f":
            return r.choice(FLOATS)
        if kind == "s":
            return r.choice(WORDS)
        if kind == "b":
            return r.choice([True, False])
        if kind == "n":
            return None
        if kind == "l":
            return [self.value(depth + 1) for _ in range(r.randint(0, 3))]
        keys = r.sample(KEYS, r.randint(0, 3))
        return {k: self.value(depth + 1) for k in keys}

    def params(self) -> str:
        top = {k: self.value(0) for k in self.r.sample(KEYS, self.r.randint(3, 8))}
        return "{" + ", ".join(f"{k}: {to_yaml(v)}" for k, v in top.items()) + "}\n"

    # -- templates --------------------------------------------------------------------
    def field(self) -> str:
        return "".join("." + self.r.choice(KEYS) for _ in range(self.r.choice([1, 1, 1, 2, 2, 3])))

    def constant(self) -> str:
        r = self.r
        k = r.randrange(8)
        if k == 0:
            return str(r.choice(INTS))
        if k == 1:
            return r.choice(["1.5", "1e3", "0x10", "'a'", "-2", "0.1", "1e21", "2.0"])
        if k == 2:
            return '"' + r.choice(["s", "", "a b", "é", "%d", "x\\ty"]) + '"'
        if k == 3:
            return r.choice(["true", "false"])
        if k == 4:
            return "nil"
        if k == 5:
            return "`raw`"
        return '"' + r.choice(FORMATS) + '"'

    def operand(self, vars_: list[str], depth: int) -> str:
        r = self.r
        k = r.randrange(12)
        if k < 4:
            return self.field()
        if k == 4:
            return "."
        if k == 5 and vars_:
            v = r.choice(vars_)
            return v + (self.field() if r.random() < 0.3 else "")
        if k == 6:
            return "$" + (self.field() if r.random() < 0.5 else "")
        if k == 7 and depth < 2:
            return "(" + self.pipeline(vars_, depth + 1) + ")"
        return self.constant()

    def command(self, vars_: list[str], depth: int, first: bool) -> str:
        r = self.r
        if r.random() < 0.55 or not first:
            fn = r.choice(FUNCS)
            nargs = r.choice([0, 1, 1, 2, 2, 2, 3])
            if fn == "printf":
                args = ['"' + r.choice(FORMATS) + '"'] + [
                    self.operand(vars_, depth) for _ in range(nargs)
                ]
            else:
                args = [self.operand(vars_, depth) for _ in range(nargs)]
            return " ".join([fn, *args])
        return self.operand(vars_, depth)

    def pipeline(self, vars_: list[str], depth: int = 0) -> str:
        cmds = [self.command(vars_, depth, True)]
        while self.r.random() < 0.25:
            cmds.append(self.command(vars_, depth, False))
        return " | ".join(cmds)

    def action(self, body: str) -> str:
        r = self.r
        left = "{{- " if r.random() < 0.15 else "{{"
        right = " -}}" if r.random() < 0.15 else "}}"
        return left + body + right

    def items(self, vars_: list[str], depth: int, in_range: bool) -> str:
        out: list[str] = []
        for _ in range(self.r.randint(1, 4)):
            out.append(self.item(vars_, depth, in_range))
        return "".join(out)

    def item(self, vars_: list[str], depth: int, in_range: bool) -> str:
        r = self.r
        k = r.randrange(20)
        if k < 5:
            return r.choice(TEXTS)
        if k < 10 or depth >= 3:
            return self.action(self.pipeline(vars_))
        if k == 10:
            name = f"$v{len(vars_)}"
            text = self.action(f"{name} := {self.pipeline(vars_)}")
            vars_.append(name)
            return text
        if k == 11 and vars_:
            return self.action(f"{r.choice(vars_)} = {self.pipeline(vars_)}")
        if k == 12:
            return "{{/* c */}}" if r.random() < 0.7 else "{{- /* c */ -}}"
        if k == 13 and in_range:
            return r.choice(["{{break}}", "{{continue}}", "{{if .}}{{break}}{{end}}"])
        inner = list(vars_)
        kw = r.choice(["if", "if", "range", "range", "with"])
        head = self.pipeline(inner)
        if kw == "range" and r.random() < 0.4:
            if r.random() < 0.5:
                head = f"$k{depth}, $e{depth} := {head}"
                inner += [f"$k{depth}", f"$e{depth}"]
            else:
                head = f"$e{depth} := {head}"
                inner.append(f"$e{depth}")
        body = self.items(list(inner), depth + 1, in_range or kw == "range")
        text = self.action(f"{kw} {head}") + body
        if r.random() < 0.4:
            if kw == "if" and r.random() < 0.4:
                text += self.action(f"else if {self.pipeline(inner)}")
                text += self.items(list(inner), depth + 1, in_range)
            text += "{{else}}" + self.items(list(inner), depth + 1, in_range)
        return text + "{{end}}"

    def template(self) -> str:
        r = self.r
        src = self.items([], 0, False)
        if r.random() < 0.1:
            src = (
                '{{define "t"}}' + self.items([], 1, False) + "{{end}}" + src + '{{template "t" .}}'
            )
        if r.random() < 0.12:
            src = self.break_it(src)
        return src

    def break_it(self, src: str) -> str:
        r = self.r
        k = r.randrange(6)
        if k == 0 and "{{end}}" in src:
            return src.replace("{{end}}", "", 1)
        if k == 1:
            return src + "{{end}}"
        if k == 2:
            return (
                src
                + "{{"
                + r.choice(["nofunc", "$undef", ".x |", "(", ")", "else", "1 | 2"])
                + "}}"
            )
        if k == 3 and len(src) > 2:
            i = r.randrange(len(src))
            return src[:i] + src[i + 1 :]
        if k == 4:
            return src + "{{" + self.pipeline([]) + " 7}}"
        return src + "{{.a"


class SafeGen(Gen):
    """Mostly executable templates over a fixed parameter shape, so that outputs (not
    only errors) are compared: known field paths, functions with fitting arguments."""

    PATHS: ClassVar[list[str]] = [
        ".s",
        ".n",
        ".f",
        ".l",
        ".m",
        ".m.a",
        ".o.s",
        ".o.l",
        ".o.n",
        ".z",
        ".missing",
    ]
    LISTS: ClassVar[list[str]] = [".l", ".m", ".o.l", ".el", ".o"]

    def params(self) -> str:
        r = self.r
        doc = {
            "s": r.choice(WORDS),
            "n": r.choice(INTS),
            "f": r.choice(FLOATS),
            "b": r.choice([True, False]),
            "z": None,
            "l": [r.choice(WORDS) for _ in range(r.randint(0, 3))],
            "el": [],
            "m": {k: r.choice(INTS) for k in r.sample(["a", "b", "c"], r.randint(0, 3))},
            "o": {
                "s": r.choice(WORDS),
                "n": r.choice(INTS),
                "l": [r.choice(INTS) for _ in range(2)],
            },
        }
        return to_yaml(doc) + "\n"

    def operand(self, vars_: list[str], depth: int) -> str:
        r = self.r
        k = r.randrange(10)
        if k < 5:
            return r.choice(self.PATHS) if r.random() < 0.8 else "$" + r.choice(self.PATHS)
        if k == 5:
            return "."
        if k == 6 and vars_:
            return r.choice(vars_)
        if k == 7 and depth < 2:
            return "(" + self.pipeline(vars_, depth + 1) + ")"
        return self.constant()

    def command(self, vars_: list[str], depth: int, first: bool) -> str:
        r = self.r
        k = r.randrange(10)
        if not first:
            return r.choice(
                [
                    "print",
                    'printf "%v|"',
                    "len",
                    "html",
                    "js",
                    "urlquery",
                    "not",
                    "println",
                    'printf "%q"',
                    "and 1",
                    "or 0",
                ]
            )
        if k < 4:
            return self.operand(vars_, depth)
        if k == 4:
            return (
                "printf "
                + '"'
                + r.choice(FORMATS)
                + '" '
                + " ".join(self.operand(vars_, depth) for _ in range(r.randint(0, 2)))
            )
        if k == 5:
            return "len " + r.choice([".s", ".l", ".m", ".o.l", ".el", '"héllo"'])
        if k == 6:
            return r.choice(
                [
                    "index .l 0",
                    'index .m "a"',
                    "index .o.l 1",
                    'index .o "s"',
                    "slice .l 1",
                    "slice .s 0 1",
                    "index .s 0",
                ]
            )
        if k == 7:
            a, b = r.choice(
                [
                    (".n", str(r.choice(INTS))),
                    (".s", '"x"'),
                    (".f", "2.5"),
                    (".b", "true"),
                    (".o.n", ".n"),
                    ("len .l", "2"),
                ]
            )
            return (
                f"{r.choice(['eq', 'ne', 'lt', 'le', 'gt', 'ge'])} {a} {b}"
                if " " not in a
                else f"{r.choice(['eq', 'ne', 'lt', 'le', 'gt', 'ge'])} ({a}) {b}"
            )
        if k == 8:
            return (
                r.choice(["and", "or", "not"])
                + " "
                + self.operand(vars_, depth)
                + (" " + self.operand(vars_, depth) if r.random() < 0.6 else "")
            )
        return (
            r.choice(["print", "println", "html", "js", "urlquery"])
            + " "
            + " ".join(self.operand(vars_, depth) for _ in range(r.randint(1, 3)))
        )

    def item(self, vars_: list[str], depth: int, in_range: bool) -> str:
        r = self.r
        if depth < 3 and r.random() < 0.2:
            kw = r.choice(["range", "with", "if"])
            inner = list(vars_)
            if kw == "range":
                head = r.choice(self.LISTS)
                if r.random() < 0.5:
                    head = f"$k{depth}, $e{depth} := {head}"
                    inner += [f"$k{depth}", f"$e{depth}"]
            else:
                head = self.pipeline(inner)
            body = self.items(list(inner), depth + 1, in_range or kw == "range")
            text = self.action(f"{kw} {head}") + body
            if r.random() < 0.4:
                text += "{{else}}" + self.items(list(inner), depth + 1, in_range)
            return text + "{{end}}"
        return super().item(vars_, depth + 3, in_range)

    def template(self) -> str:
        return self.items([], 0, False)


class PrintfGen(Gen):
    """``printf`` with random flags, widths, precisions, verbs and argument types."""

    ARGS: ClassVar[list[str]] = [
        "0",
        "1",
        "-1",
        "42",
        "255",
        "-255",
        "1000000",
        "0.0",
        "-0.0",
        "1.5",
        "-2.25",
        "1e21",
        "1e-7",
        "123456.789",
        "3.14159",
        '"x"',
        '""',
        '"héllo"',
        '"a b"',
        "true",
        "false",
        ".nul",
        ".l",
        ".m",
        '(index "hi" 0)',
        "1e100",
        ".s",
        ".n",
        ".f",
    ]

    def params(self) -> str:
        return '{nul: null, l: [1, "a"], m: {k: 2.5}, s: "str", n: 7, f: 0.5}\n'

    def template(self) -> str:
        r = self.r
        n = r.randint(1, 3)
        fmt = ""
        for _ in range(n):
            fmt += r.choice(["", "", "a", "|", "é "]) + "%"
            fmt += "".join(
                r.choice(["", "", "-", "+", " ", "0", "#"]) for _ in range(r.randint(0, 2))
            )
            fmt += r.choice(["", "", "5", "10", "1", "3", "*"])
            fmt += r.choice(["", "", ".2", ".0", ".5", ".", ".*"])
            fmt += r.choice("sdvqxXofeEtgGbcUT%")
        count = max(0, r.choice([n, n, n, n - 1, n + 1, n + 2]))
        args = " ".join(r.choice(self.ARGS) for _ in range(count))
        quoted = '"' + fmt.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return "{{printf " + quoted + (" " + args if args else "") + "}}"


def cases(count: int = DEFAULT_COUNT, seed: int = DEFAULT_SEED) -> list[dict[str, str]]:
    rng = random.Random(seed)
    profiles: list[Gen] = [Gen(rng), SafeGen(rng), PrintfGen(rng)]
    out = []
    for i in range(count):
        gen = profiles[i % 3]
        template = gen.template()
        out.append({"id": f"gen-{seed}-{i:04d}", "template": template, "params": gen.params()})
    return out
