# ruff: noqa: E501
"""Hand-written conformance cases: every construct and every error family of Go's
text/template. Expected results come from the Go oracle (see goldens.json)."""

from __future__ import annotations

P0 = """\
name: World
n: 42
neg: -7
zero: 0
one: 1
f: 1.5
fint: 2.0
fzero: 0.0
big: 1.0e+21
small: 1.0e-07
mil: 1000000.0
hundredk: 100000.0
pi: 3.14159
t: true
fls: false
nul: null
s: hello
es: ""
u: "héllo wörld"
q: "a \\"quoted\\" <tag> & 'x' = y\\\\z"
ctl: "tab\\there\\nnl\\u0001"
l: [a, b, c]
nums: [3, 1, 2]
el: []
mixed: [1, two, 3.5, true, null, [x, y], {k: v}]
m: {b: 2, a: 1, c: 3}
em: {}
nested:
  inner:
    deep: value
    list: [1, 2]
  name: nested
items:
  - name: first
    tags: [x, y]
    enabled: true
  - name: second
    tags: []
    enabled: false
  - name: third
    tags: [z]
text: |
  line one
  line two
"""


def _c(cid: str, template: str, params: str = P0) -> dict[str, str]:
    return {"id": cid, "template": template, "params": params}


def _group(prefix: str, templates: list[str], params: str = P0) -> list[dict[str, str]]:
    return [_c(f"{prefix}-{i:02d}", t, params) for i, t in enumerate(templates)]


TEXT = [
    "",
    "plain text only",
    "   \n\t  ",
    "markdown {% not jinja %} {# nor this #} }} { done",
    "crlf\r\nline\r\n{{.name}}\r\n",
    "unicode ✓ héllo 😀 {{.u}}",
    "ends with brace {",
    "{{.name}}{",
    "a}}b{{.name}}c}}",
    "{{.name}}\n",
    "\n\n{{.name}}\n\n",
]

COMMENTS = [
    "a{{/* comment */}}b",
    "a {{- /* trimmed */ -}} b",
    "a{{/* multi\nline\ncomment */}}b",
    "x{{/* unclosed",
    "{{/* c */ .name}}",
    "{{- /* c */}}x",
    "a\n{{/* c */ -}}\n  b",
    "{{/**/}}",
]

TRIM = [
    "a  {{- .name}}",
    "{{.name -}}   b",
    "a\n\n  {{- .name -}}\n\n  b",
    "{{- .name}}",
    "{{-3}}",
    "{{ -3 }}",
    "{{- -3 -}}",
    "x {{-3}} y",
    "a {{- 3 -}} b",
    "a\t{{-\t.name\t-}}\tb",
    "a {{-.name}}",
    "a {{.name-}} b",
    "a\r\n{{- .name -}}\r\nb",
]

FIELDS = [
    "{{.name}}",
    "{{.nested.inner.deep}}",
    "{{.nested.inner}}",
    "{{.nested}}",
    "{{.}}",
    "{{$}}",
    "{{.missing}}",
    "{{.missing.x.y}}",
    "{{.nul}}",
    "{{.nul.x}}",
    "{{.s.x}}",
    "{{.n.x}}",
    "{{.l.x}}",
    "{{.nested.inner.deep.more}}",
    "{{.items}}",
    "{{.mixed}}",
    "{{.em}} {{.el}}",
    "{{.text}}",
    "{{.t}} {{.fls}}",
    "{{.x.__class__}}",
    "{{.s.__len__}}",
    "{{.m.items}}",
    "{{.name.upper}}",
    "{{$.name}} {{$.nested.name}}",
    "{{.q}} {{.ctl}}",
]

NUMBERS = [
    "{{1}} {{-1}} {{+1}} {{0}} {{-0}}",
    "{{1.5}} {{1e3}} {{1e21}} {{1e20}} {{1e-7}} {{1e-4}} {{0.0001}} {{0.00001}}",
    "{{0x1F}} {{0X1f}} {{0o17}} {{017}} {{0b101}} {{1_000}} {{0x_1F}}",
    "{{'a'}} {{'\\n'}} {{'\\x41'}} {{'\\u00e9'}} {{'é'}} {{'\\''}}",
    "{{123456789.0}} {{100000.0}} {{1000000.0}} {{0.1}} {{.5}} {{5.}}",
    "{{.f}} {{.fint}} {{.fzero}} {{.big}} {{.small}} {{.mil}} {{.hundredk}} {{.pi}}",
    "{{1i}} {{2.5i}}",
    "{{0x1p4}} {{0x1.8p1}}",
    "{{18446744073709551615}}",
    "{{9223372036854775807}} {{-9223372036854775808}}",
    "{{99999999999999999999}}",
    "{{1e400}}",
    "{{08}}",
    "{{1a}}",
    "{{0x}}",
    "{{1__0}}",
    "{{3.x}}",
    "{{1+2i}}",
    "{{--1}}",
    "{{.neg}} {{.zero}}",
]

STRINGS = [
    '{{"a\\tb"}}',
    '{{"\\u00e9\\U0001F600"}}',
    '{{"\\x41\\101"}}',
    "{{`raw\\n string`}}",
    '{{"bad \\q escape"}}',
    '{{"unterminated}}',
    '{{"a\nb"}}',
    "{{`multi\nline raw`}}",
    "{{`unterminated raw}}",
    "{{'ab'}}",
    "{{'a}}",
    "{{''}}",
    '{{"\\\'"}}',
    '{{"quote \\" inside"}}',
    '{{"a".x}}',
    '{{"\\xff"}}',
]

CONSTANTS = [
    "{{true}} {{false}}",
    "{{nil}}",
    "{{nil.x}}",
    "{{true.x}}",
    "{{1.x}}",
]

VARIABLES = [
    "{{$x := 1}}{{$x}}",
    "{{$x := .name}}{{$x := .n}}{{$x}}",
    "{{$x := .nested}}{{$x.inner.deep}}",
    "{{$y}}",
    "{{$y = 1}}",
    "{{$x := 1}}{{$x = 2}}{{$x}}",
    "{{if .t}}{{$x := 1}}{{end}}{{$x}}",
    "{{$x := 0}}{{range .nums}}{{$x = .}}{{end}}{{$x}}",
    "{{$x := 0}}{{range .nums}}{{$y := .}}{{$x = $y}}{{end}}{{$x}}",
    "{{$x := .nul}}{{$x.y}}",
    "{{$x := .missing}}{{$x.y}}",
    "{{$x := .s}}{{$x.y}}",
    "{{$x := 1}}{{$x 2}}",
    "{{$x := 1}}{{$x.y}}",
    "{{$}}",
    "{{$.missing}}",
    "{{$x := 1}}{{with .s}}{{$x}}{{$x = 5}}{{end}}{{$x}}",
    "{{$x, $y := 1}}",
    '{{$x := 1 | printf "%d-"}}{{$x}}',
    "{{$x := $x}}",
    "{{$x := 3}}{{$x := $x}}{{$x}}",
    "{{$x :}}",
    "{{$x := }}",
    "{{$1 := 5}}{{$1}}",
    "{{$x:=1}}{{$x}}",
    "{{$x=1}}",
    "{{$x := 1}}{{range $i, $e := .l}}{{$x = $i}}{{end}}{{$x}}",
    '{{define "t"}}{{$x}}{{end}}{{$x := 1}}',
]

PIPELINES = [
    '{{.s | printf "%q"}}',
    '{{"x" | printf "%s-%s" "y"}}',
    "{{.n | len}}",
    "{{.l | len}}",
    "{{. | len}}",
    "{{(.m).a}}",
    "{{(index .mixed 6).k}}",
    "{{(.s).x}}",
    "{{.s | .x}}",
    "{{1 | 2}}",
    "{{.s | 2}}",
    "{{(1) 2}}",
    "{{.s 1}}",
    "{{.missing.x 1}}",
    "{{. 1}}",
    '{{"a" 1}}',
    "{{nil 1}}",
    "{{true 1}}",
    '{{.s | printf "%s" | printf "[%s]" | len}}',
    '{{(len .l) | printf "%d"}}',
    "{{.l | index 0}}",
    "{{0 | index .l}}",
    '{{"%d" | printf}}',
    "{{1 | printf}}",
    "{{.n | printf}}",
    "{{.missing | printf}}",
    "{{(.nul).x}}",
    "{{(.missing).x}}",
    "{{(nil).x}}",
    '{{(.s | printf "%s!")}}',
    "{{(.s) (.s)}}",
    '{{.s | (printf "%s")}}',
    "{{.s | (.name)}}",
    "{{.m | .a}}",
    "{{$x := .m}}{{.s | $x.a}}",
    "{{.s | $}}",
    "{{.s|len}}",
    "{{ .s | len }}",
    "{{.s |}}",
    "{{| .s}}",
    "{{()}}",
    "{{(.s}}",
    "{{.s)}}",
    "{{.s | not}}",
    "{{.missing | not}}",
    "{{.s | and .n}}",
    "{{.s | or .zero}}",
    "{{0 | and 1}}",
]

IF = [
    "{{if .t}}T{{end}}",
    "{{if .fls}}T{{else}}F{{end}}",
    "{{if .zero}}T{{else}}F{{end}}{{if .one}}T{{else}}F{{end}}",
    "{{if .fzero}}T{{else}}F{{end}}{{if .f}}T{{else}}F{{end}}",
    "{{if .es}}T{{else}}F{{end}}{{if .s}}T{{else}}F{{end}}",
    "{{if .el}}T{{else}}F{{end}}{{if .l}}T{{else}}F{{end}}",
    "{{if .em}}T{{else}}F{{end}}{{if .m}}T{{else}}F{{end}}",
    "{{if .nul}}T{{else}}F{{end}}{{if .missing}}T{{else}}F{{end}}",
    "{{if 0.0}}T{{else}}F{{end}}{{if 0i}}T{{else}}F{{end}}{{if nil}}T{{else}}F{{end}}",
    "{{if .zero}}a{{else if .es}}b{{else if .s}}c{{else}}d{{end}}",
    "{{if .zero}}a{{else if .es}}b{{else}}d{{end}}",
    "{{if .t}}{{if .fls}}x{{else}}y{{end}}{{end}}",
    "{{if}}x{{end}}",
    "{{else}}",
    "{{end}}",
    "{{if .t}}unterminated",
    "{{if .t}}{{else}}{{else}}{{end}}",
    "{{if $x := .n}}{{$x}}{{else}}{{$x}}{{end}}",
    "{{if $x := .zero}}{{$x}}{{else}}[{{$x}}]{{end}}",
    "{{if .t}}\n  indented\n{{- end}}",
    "{{if .t -}}\n  trimmed\n{{- end}}",
    "{{if .t}}a{{else if}}b{{end}}",
    "{{if .t}}a{{else .x}}b{{end}}",
    "{{if .t}}a{{end .x}}",
    "{{if .s.x}}a{{end}}",
    "{{if and .t .s}}both{{end}}{{if or .fls .zero}}x{{else}}neither{{end}}",
    "{{if not .l}}empty{{else}}full{{end}}",
    "{{if .t}}a{{else}}b{{else if .t}}c{{end}}",
    "{{if eq .n 42}}yes{{end}}",
    "{{if .t}}{{break}}{{end}}",
]

RANGE = [
    "{{range .l}}[{{.}}]{{end}}",
    "{{range .m}}{{.}},{{end}}",
    "{{range $k, $v := .m}}{{$k}}={{$v}};{{end}}",
    "{{range $i, $v := .l}}{{$i}}:{{$v}} {{end}}",
    "{{range $v := .l}}{{$v}}{{end}}",
    "{{range .el}}x{{else}}empty{{end}}",
    "{{range .em}}x{{else}}empty{{end}}",
    "{{range .nul}}x{{else}}nil{{end}}",
    "{{range .missing}}x{{else}}missing{{end}}",
    "{{range .s}}x{{end}}",
    "{{range .n}}x{{end}}",
    "{{range .f}}x{{end}}",
    "{{range .t}}x{{end}}",
    "{{range 5}}x{{end}}",
    "{{range .items}}{{.name}}:{{range .tags}}{{.}}{{else}}-{{end}};{{end}}",
    "{{range .items}}{{if .enabled}}{{.name}}{{end}}{{end}}",
    "{{range .mixed}}<{{.}}>{{end}}",
    "{{range .mixed}}{{len .}}{{end}}",
    "{{range .mixed}}{{.k}}{{end}}",
    "{{range .nums}}{{if eq . 1}}{{break}}{{end}}{{.}}{{end}}",
    "{{range .nums}}{{if eq . 1}}{{continue}}{{end}}{{.}}{{end}}",
    "{{range .l}}{{break}}{{else}}E{{end}}",
    "{{range .l}}{{continue}}{{.}}{{else}}E{{end}}",
    "{{break}}",
    "{{continue}}",
    "{{range .l}}{{break 1}}{{end}}",
    "{{range .l}}{{end}}{{break}}",
    "{{range .l}}{{else}}{{break}}{{end}}",
    "{{range $i, $v, $w := .l}}{{end}}",
    "{{range $i, 1 := .l}}{{end}}",
    "{{range $i := .l}}{{$i}}{{else}}{{$i}}{{end}}",
    "{{range $i, $v := .el}}{{else}}[{{$i}}|{{$v}}]{{end}}",
    "{{range .l}}{{$}}{{end}}",
    "{{range .l}}{{$.name}}{{end}}",
    "{{range .nested}}{{.}}|{{end}}",
    "{{range $k, $v := .nested}}{{$k}}{{end}}",
    "{{range}}{{end}}",
    "{{range .l}}unterminated",
    "{{range .l}}{{range $.nums}}{{if eq . 1}}{{break}}{{end}}{{.}}{{end}};{{end}}",
    "{{range .l}}[{{range $.el}}x{{else}}e{{break}}y{{end}}]{{end}}",
    "{{range .l}}[{{range $.el}}x{{else}}e{{continue}}y{{end}}]{{end}}",
    "{{range .l}}{{with $.t}}{{break}}{{end}}{{.}}{{end}}",
    "{{range .l}}{{with $.s}}{{continue}}{{end}}{{.}}{{end}}",
    "{{range $i, $e := .mixed}}{{$e}}{{end}}",
    "{{range $v := .mixed}}{{$v.k}}{{end}}",
    "{{range .l -}}\n  {{.}}\n{{- end}}",
    "{{range .m}}{{break}}{{end}}done",
    "{{$n := 0}}{{range $i, $e := .nums}}{{if gt $e $n}}{{$n = $e}}{{end}}{{end}}{{$n}}",
    "{{range .nums}}{{range $.l}}{{continue}}{{end}}{{.}}{{end}}",
    "{{$x := 0}}{{$y := 9}}{{range $x = .l}}{{$x}},{{$y}};{{end}}|{{$x}}{{$y}}",
    "{{$x := 0}}{{range $x = .l}}{{$z := 5}}{{$x}}{{end}}|{{$x}}",
    "{{range $q = .l}}x{{end}}",
    "{{$a := 1}}{{$b := 2}}{{range $a, $b = .m}}{{$a}}{{$b}};{{end}}{{$a}}{{$b}}",
    "{{$a := 1}}{{$b := 2}}{{$c := 3}}{{range $a, $b = .l}}{{$a}}{{$b}}{{$c}};{{end}}{{$a}}{{$b}}{{$c}}",
    "{{$a := 1}}{{if 1}}{{$b := 7}}{{range $a = .l}}{{$b}}{{end}}{{$b}}{{end}}{{$a}}",
    "{{(or 1 .s.x) 2}}",
    "{{or 0 .s.x}} {{and 0 .s.x}}",
    "{{(or .s .n) 2}}",
    "{{.s | (or .s .n) 2}}",
    "{{.s | or .s .n | (1) 2}}",
    "{{.m | and .s .zero | (1) 2}}",
    '{{printf (or 1 "x")}}',
    '{{printf (or .zero .n "q")}}',
    "{{printf (and .n .m)}}",
    "{{$q = or 1 .x}}",
    "{{$q = or 0 .x .s}}",
    "{{(or .s .n).x}}",
    "{{(or .zero .n .m).x.y}}",
    "{{(and .s .n).x}}",
    "{{range or .zero .n .s}}{{end}}",
]

WITH = [
    "{{with .s}}{{.}}{{end}}",
    "{{with .missing}}x{{else}}none{{end}}",
    "{{with .nested}}{{.name}}/{{.inner.deep}}{{end}}",
    "{{with $x := .m}}{{$x.a}}{{.b}}{{end}}",
    "{{with $x := .es}}x{{else}}[{{$x}}]{{end}}",
    "{{with .zero}}x{{else}}{{.name}}{{end}}",
    "{{with .s}}{{.x}}{{end}}",
    "{{with}}{{end}}",
    "{{with .s}}a{{else if .t}}b{{end}}",
    "{{with .l}}{{range .}}{{.}}{{end}}{{end}}",
    "{{with .nul}}x{{else}}nul{{end}}",
    "{{with .s}}{{$}}{{end}}",
]

TEMPLATES = [
    '{{define "t"}}T({{.}}){{end}}{{template "t" .s}}',
    '{{define "t"}}T({{.}}){{end}}{{template "t"}}',
    '{{template "nope"}}',
    '{{template "nope" .s}}',
    '{{define "t"}}[{{.name}}]{{end}}{{template "t" .}}{{template "t" .nested}}',
    '{{block "b" .s}}block:{{.}}{{end}}',
    '{{block "b" .}}{{.name}}{{end}}{{define "b"}}override{{end}}',
    '{{define "a"}}x{{end}}{{define "a"}}y{{end}}',
    '{{define "a"}}{{end}}{{define "a"}}y{{end}}{{template "a"}}',
    '{{define "fragment"}}defined body{{end}}',
    '{{define "fragment"}}defined body{{end}}main body',
    '{{define "fragment"}}defined body{{end}}   \n  ',
    '{{define "r"}}{{.name}}{{with .child}}>{{template "r" .}}{{end}}{{end}}{{template "r" .tree}}',
    "{{define x}}{{end}}",
    '{{define "a"}}unterminated',
    '{{define "a"}}x{{else}}y{{end}}',
    '{{if 1}}{{define "a"}}x{{end}}{{end}}',
    "{{template .name}}",
    '{{template "t" 1 2}}{{define "t"}}{{.}}{{end}}',
    '{{block "b" .}}x{{else}}y{{end}}',
    "{{block .x .}}{{end}}",
    '{{define "t"}}{{.x.y}}{{end}}{{template "t" .nested}}',
    '{{define "t"}}{{index .l 9}}{{end}}\n{{template "t" .}}',
    '{{define "t"}}{{$}}{{end}}{{template "t" .s}}',
    '{{define "t"}}{{break}}{{end}}',
    '{{range .l}}{{define "t"}}x{{end}}{{end}}',
    '{{define "t"}}T{{end}}{{range .l}}{{template "t"}}{{end}}',
    '{{define "t" }} spaced {{end}}{{template "t"}}',
    "{{define `raw`}}R{{end}}{{template `raw`}}",
    '{{define "t"}}{{template "t" .}}{{end}}{{template "t" .}}',
    '{{template "t" (printf "%s" .s)}}{{define "t"}}<{{.}}>{{end}}',
    '{{define "a"}}A{{template "b" .}}{{end}}{{define "b"}}B{{.}}{{end}}{{template "a" 1}}',
]

FUNCS = [
    '{{and 1 0 2}} {{and 1 2 3}} {{or 0 "" "x"}} {{or 0 ""}}',
    "{{and}}",
    "{{or}}",
    "{{or .missing .s}} {{and .s .n}} {{and .s .nul}}",
    "{{not 0}} {{not .s}} {{not .missing}} {{not nil}}",
    "{{not}}",
    "{{not 1 2}}",
    "{{len .s}} {{len .u}} {{len .l}} {{len .m}} {{len .el}} {{len .em}}",
    "{{len .n}}",
    "{{len .nul}}",
    "{{len .missing}}",
    "{{len nil}}",
    "{{len}}",
    "{{len .s .s}}",
    "{{len 3}}",
    "{{len .t}}",
    '{{index .l 1}} {{index .nested "inner" "deep"}} {{index .m "b"}}',
    '{{index .m "zz"}}',
    "{{index .l 5}}",
    "{{index .l 3}}",
    "{{index .l -1}}",
    "{{index .s 0}} {{index .u 1}}",
    "{{index .s 5}}",
    "{{index .m 1}}",
    "{{index nil 1}}",
    "{{index .missing 1}}",
    "{{index .nul 1}}",
    '{{index .l "a"}}',
    "{{index .l}}",
    "{{index .mixed 4 0}}",
    "{{index .n 0}}",
    "{{index .l .one}}",
    "{{index .l nil}}",
    "{{index .l 1.0}}",
    "{{index .m nil}}",
    '{{index .mixed 5 1}} {{index .mixed 6 "k"}}',
    "{{index .s 0 0}}",
    "{{index}}",
    "{{slice .l 1}} {{slice .l 1 2}} {{slice .s 1 3}} {{slice .l 0 1 2}} {{slice .l}}",
    "{{slice .s 0 1 2}}",
    "{{slice .l 2 1}}",
    "{{slice .l 0 1 0}}",
    "{{slice .l 0 5}}",
    "{{slice .n 1}}",
    "{{slice .l .one}}",
    "{{slice .l 1 2 3 4}}",
    "{{slice nil 1}}",
    '{{slice .l "a"}}',
    "{{slice .s 3}} {{slice .s 5}} {{slice .s 0 0}}",
    "{{slice .u 1 2}}",
    "{{slice .l (len .l)}}",
    "{{call .s}}",
    "{{call .missing}}",
    "{{call}}",
    "{{call .n 1 2}}",
    "{{call nil}}",
]

COMPARE = [
    '{{eq 1 1}} {{eq 1 2}} {{eq .n 42}} {{eq .n 41 42}} {{eq .s "x" "hello"}}',
    "{{eq 1 1.0}}",
    "{{eq .f 1.5}} {{eq .fint 2.0}} {{eq .t true}} {{eq .fls true}}",
    "{{eq .fint 2}}",
    '{{eq 1 "a"}}',
    "{{eq .missing nil}} {{eq nil nil}} {{eq .nul nil}} {{eq .nul .missing}}",
    "{{eq .missing 1}} {{eq 1 .missing}}",
    "{{eq .l .l}}",
    "{{eq .m .m}}",
    "{{eq .l .m}}",
    "{{eq .nums .l}}",
    "{{eq .l nil}} {{eq nil .l}}",
    "{{eq 1}}",
    "{{eq}}",
    '{{ne 1 2}} {{ne "a" "a"}} {{ne .n 42}}',
    '{{ne 1 "a"}}',
    "{{ne 1}}",
    "{{ne 1 2 3}}",
    '{{lt 1 2}} {{lt 2 1}} {{lt "a" "b"}} {{lt 1.5 2.5}} {{lt -1 0}}',
    "{{lt true false}}",
    "{{lt .l 1}}",
    "{{lt .missing 1}}",
    "{{lt 1 1.5}}",
    "{{lt 1 2 3}}",
    "{{le 2 2}} {{le 3 2}} {{gt 1.5 1.2}} {{gt 1 1}} {{ge .n 42}} {{ge 1 2}}",
    "{{le .l .l}}",
    '{{gt "b" "a"}} {{ge "a" "b"}}',
    '{{gt 1 "a"}}',
    "{{ge nil 1}}",
    "{{eq (index .s 0) 104}} {{eq 104 (index .s 0)}} {{lt (index .s 0) 200}} {{lt -1 (index .s 0)}}",
    "{{eq (index .s 0) (index .s 1)}} {{lt (index .s 1) (index .s 0)}}",
    "{{eq 1i 1i}} {{lt 1i 2i}}",
    "{{eq .mixed .mixed}}",
    "{{eq .em .em}}",
    "{{eq .s .s .n}}",
    "{{eq .n .s}}",
]

PRINT = [
    '{{print 1 2 "a" "b" 3}}',
    "{{print}}",
    '{{println 1 "a" 2}}',
    "{{println}}",
    "{{print nil}} {{print .missing}} {{print .nul}}",
    "{{print .l .m}}",
    '{{print "a" 1 "b"}}{{print 1 2}}{{print 1.5 true}}',
    "{{print .mixed}}",
    "{{print (index .s 0)}}",
    "{{printf}}",
    "{{printf 1}}",
    "{{printf .n}}",
    "{{printf .missing}}",
    "{{printf .nul}}",
    "{{printf nil}}",
    "{{printf true}}",
    "{{printf .s}}",
    '{{printf "%d %d" 1}}',
    '{{printf "%d" 1 2}}',
    '{{printf "%d" 1 "two" nil .l}}',
    '{{printf "%!"}}',
    '{{printf "%"}}',
    '{{printf "%[3]d" 1}}',
    '{{printf "%[2]d %[1]s" "a" 2}}',
    '{{printf "%*d|" 5 1}}',
    '{{printf "%-*d|" 5 1}}',
    '{{printf "%*d|" -5 1}}',
    '{{printf "%.*f" 2 3.14159}}',
    '{{printf "%*d" "x" 1}}',
    '{{printf "%.*d" "x" 1}}',
    '{{printf "%[1]*d" 3 1}}',
    '{{printf "%z" 1}}',
    '{{printf "%%"}}',
    '{{printf "%%%d%%" 5}}',
    '{{printf "%d%%" 50}}',
    '{{printf "no verbs" 1}}',
    '{{printf "%v %v" .missing .nul}}',
    '{{printf "%d" .missing}}',
    '{{printf "%s" nil}}',
    '{{printf "%T %T %T %T %T %T %T %T" .n .f .s .t .l .m .nul (index .s 0)}}',
    '{{printf "%T" 1i}} {{printf "%v %.2f" 1i 2.5i}}',
    '{{printf "%5.1f|%-8.3f|%08.3f|%+.2f|% .2f" 3.14159 2.5 -1.5 2.0 3.0}}',
    '{{printf "%e %E %.3e %g %G %.3g %.10g" 1234.5678 0.000123 1e21 100000.0 1e-7 1234.5678 1.0}}',
    '{{printf "%g %g %g %g %g" 1e6 1e5 123456789.0 0.0001 0.00001}}',
    '{{printf "%f %F %.0f %.1f %5.0f|" 2.5 3.5 2.5 0.05 1e3}}',
    '{{printf "%v %v %v" 1e100 -0.0 1.7976931348623157e308}}',
    '{{printf "%#g %#.3g %#v %#e" 1.0 2.0 3.0 4.0}}',
    '{{printf "%6.2v|%-6v|%06v" 3.14159 1.5 2.5}}',
    '{{printf "%q %#q %+q" "héllo\\n" "back`tick" "ünï"}}',
    '{{printf "%x %X % x %#x %# x" "hi!" "hi!" "hi!" "hi!" "hi!"}}',
    '{{printf "%.2s|%5s|%-5s|%05s|%.0s|" "abcdef" "ab" "ab" "ab" "ab"}}',
    '{{printf "%5.2s|%.10s|%3s" "héllo" "hi" "héllo"}}',
    '{{printf "%c %c %U %#U %q %+q" 65 233 233 233 233 128512}}',
    '{{printf "%c %U %q" -1 -1 1114112}}',
    '{{printf "%d %+d %5d %-5d| %05d %x %X %o %O %b %#x %#o %#b" 42 42 42 42 42 255 255 8 8 5 255 8 5}}',
    '{{printf "%d %x %05d %+05d % d % 05d" -42 -255 -42 42 42 -42}}',
    '{{printf "%.3d %.0d %5.3d %-08d|" 7 0 7 7}}',
    '{{printf "%t %t %v %5t|%-6t|" true false true true false}}',
    '{{printf "%d" true}} {{printf "%s" 1}} {{printf "%t" 1}} {{printf "%f" "x"}} {{printf "%x" true}}',
    '{{printf "%v|%+v|%#v|%s|%d|%q|%x" .l .l .l .l .l .l .l}}',
    '{{printf "%v|%+v|%#v|%s|%d|%x" .m .m .m .m .m .m}}',
    '{{printf "%v|%#v|%s|%d|%5v|%-3v|" .nums .nums .nums .nums .nums .nums}}',
    '{{printf "%v|%#v|%s|%d|%q" .mixed .mixed .mixed .mixed .mixed}}',
    '{{printf "%v|%#v|%s|%d" .nested .nested .nested .nested}}',
    '{{printf "%v|%#v|%v|%#v" .em .em .el .el}}',
    '{{printf "%#v|%#v|%#v|%#v|%#v|%#v" .n .f .s .t .nul (index .s 0)}}',
    '{{printf "%v|%d|%x|%c|%q|%U|%#v|%08b" (index .s 0) (index .s 0) (index .s 0) (index .s 0) (index .s 0) (index .s 0) (index .s 0) (index .s 0)}}',
    '{{printf "%s|%v|%d" .items .items .items}}',
    '{{printf "%p" 1}}',
    '{{printf "%-+5d|%+-5d|%0-5d|%-05d|" 1 2 3 4}}',
    '{{printf "%5%|%-5%|"}}',
    '{{printf "%[0]d" 1}}',
    '{{printf "%[x]d" 1}}',
    '{{printf "%[1]d %d %d" 1 2 3}}',
    '{{printf "%[2]*[1]d" 12 5}}',
    '{{printf "%.[2]d" 1 2}}',
    '{{printf "%3.[2]d" 1 2}}',
    '{{printf "%1000001d" 1}}',
    '{{printf "%.2f %.2f %.2f %.2f" 0.125 0.375 2.675 1.005}}',
    '{{printf "%v %v %v %v" 0.1 0.2 0.30000000000000004 100.0}}',
    '{{printf "é%dé%sé" 1 "ü"}}',
    '{{printf "%!d"}} {{printf "%-"}} {{printf "%."}} {{printf "%5"}}',
    '{{printf "%d %s" (len .l) (index .l 0)}}',
    '{{printf "%s" .u | len}}',
    '{{printf "%x" .u}} {{printf "%q" .ctl}} {{printf "%+q" .u}}',
    '{{printf "%v" .text}}',
    '{{printf "%08.3e|%+.1e|%-12g|%012g" 1234.5 -0.00012 3.5 -2.25}}',
    '{{printf "%.0e %.1g %.0g %g" 5.5 0.15 25.0 0.0}}',
    '{{printf "%e %f %g" 0.0 -0.0 1e-320}}',
    '{{printf "%s %v" .big .small}}',
    '{{printf "%#x %#X %#.2x %x %#g %#e %#v" 2.5 2.5 2.5 0.0 0.0 100.0 0.5}}',
    '{{printf "%x %X %.3x %b %b" 100000.0 -0.1 1.0 1.0 .f}}',
    '{{printf "%#.3g|%#g|%#.0f|%#.0e" 123456.0 1e-7 3.0 5.0}}',
    '{{printf "%010.2v|%08.3d|%-08.2x|%08.3f|%+08.2e|%010.3s|" 1 7 255 1.5 -1.5 "abcdef"}}',
]

ESCAPERS = [
    "{{html .q}}",
    '{{html "<a href=\\"x\\">&amp;</a>"}}',
    "{{html 1 2 .s}}",
    "{{html}} {{html nil}} {{html .missing}}",
    "{{html .l}}",
    "{{js .q}}",
    '{{js "line\\nbreak\\ttab\\u0001 ü ☃"}}',
    '{{js 1 "a" 2}}',
    "{{js .missing}}",
    '{{urlquery "a b&c=d/é?"}}',
    "{{urlquery .q}}",
    "{{urlquery 1 2}}",
    "{{urlquery .missing .nul}}",
    "{{.q | html}}",
    "{{.q | js | html}}",
    '{{html "\\x00"}}',
    '{{js "\\u2028\\u00ad"}}',
]

LEX_ERRORS = [
    "{{.name",
    '{{"abc}}',
    "{{.name$}}",
    "{{#}}",
    "{{.name :}}",
    "{{ é }}",
    "{{ ☃ }}",
    "{{.name.}}",
    "{{.name . }}",
    "{{@}}",
    "{{.a-b}}",
    "{{.name\n",
    "first\n{{.name\n\nsecond",
    "{{if\n.t}}ok{{end}}",
    "{{.name}}\n{{if .t}}\n{{.name\n}}",
    "{{\n.name\n}}",
    '{{.x\n|\nprintf\n"%v"}}',
    "{{ .name \x00 }}",
    "{{ .name\t}}",
    "{{.name))}}",
    "{{(.name}}",
    "{{.na-me}}",
    "{{foo}}",
    "{{foo .bar}}",
    "{{.name | foo}}",
    '{{printf "%s" (foo)}}',
    "{{cycler}} {{range_}}",
    "{{ifx .t}}",
    "{{if .t}}{{end}}{{end}}",
    "a\nb\n{{else}}",
    "{{$x := 1}}\n{{if $x}}\n{{$y}}\n{{end}}",
    "{{,}}",
    "{{.name,}}",
    "{{ }}",
    "{{}}",
    "{{-}}",
    "{{- }}",
    "{{ -}}",
    "{{.name -}",
    "{{.name }",
    "{{$}x}}",
    "{{$.}}",
    "{{..}}",
    "{{.1x}}",
    "{{..name}}",
    '{{"a" "b"}}',
    "{{'\\q'}}",
    "{{'\\400'}}",
    '{{"\\400"}}',
    '{{"\\uD800"}}',
    "{{.name | }}",
    "{{if .t}}{{else if}}{{end}}",
    "{{with .t}}{{else if .t}}x{{end}}",
    "{{range .l}}{{else if .t}}x{{end}}",
]

YAML_TYPES = [
    ("{{.a}} {{.b}} {{.c}} {{.d}}", "a: 1.0\nb: 1\nc: '1'\nd: 1.50\n"),
    ("{{eq .a .b}}", "a: 1.0\nb: 1\n"),
    ("{{.m}} {{index .m 1}}", "m:\n  1: one\n  2: two\n"),
    ("{{.d}} {{len .d}}", "d: 2024-01-02\n"),
    ("{{range .l}}{{.}};{{end}}", "l:\n  - |\n    block\n    text\n  - >\n    folded\n    text\n"),
    ("{{.a.x}} {{.b.x}}", "base: &b\n  x: 1\na: *b\nb:\n  <<: *b\n"),
    ("{{.}}", ""),
    ("{{.x}}", ""),
    ("{{.}}", "{}\n"),
    ("{{.k}}", "k: ~\n"),
    (
        "{{.big}} {{.neg}} {{.octal}} {{.hex}}",
        "big: 9007199254740993\nneg: -0\noctal: 0o17\nhex: 0x1F\n",
    ),
    ("{{.inf}} {{.ninf}} {{.nan}}", "inf: .inf\nninf: -.inf\nnan: .nan\n"),
    (
        '{{index . "clé"}} {{index . "a-b"}} {{index . "with space"}}',
        'clé: 1\na-b: 2\n"with space": 3\n',
    ),
    ("{{.list}} {{len .list}}", "list:\n- a\n-\n- c\n"),
    ("{{.s}}|{{len .s}}", 's: "  padded  "\n'),
    ("{{.e}}", "e: 1e3\n"),
    ("{{.u}}", 'u: "\\u00e9\\U0001F600"\n'),
    ("{{.x}}", "x: 12345678901234567890123\n"),
    ("{{.f}}", "f: 3.0e-5\n"),
    ("{{.f}} {{.g}}", "f: 0.1\ng: 1.0e+15\n"),
    (
        '{{.u}} {{printf "%T %v %#v %x %d" .u .u .u .u .u}} {{eq .u .u}} {{lt .i .u}} {{gt .u 1}}',
        "u: 18446744073709551615\ni: -1\n",
    ),
    ('{{printf "%T %T %T" .a .b .c}}', "a: 9223372036854775807\nb: 9223372036854775808\nc: 0b11\n"),
]

TREE = """\
tree:
  name: root
  child:
    name: mid
    child:
      name: leaf
"""


def cases() -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    out += _group("text", TEXT)
    out += _group("comment", COMMENTS)
    out += _group("trim", TRIM)
    out += _group("field", FIELDS)
    out += _group("number", NUMBERS)
    out += _group("string", STRINGS)
    out += _group("const", CONSTANTS)
    out += _group("var", VARIABLES)
    out += _group("pipe", PIPELINES)
    out += _group("if", IF)
    out += _group("range", RANGE)
    out += _group("with", WITH)
    out += _group("tmpl", TEMPLATES, P0 + TREE)
    out += _group("func", FUNCS)
    out += _group("cmp", COMPARE)
    out += _group("print", PRINT)
    out += _group("esc", ESCAPERS)
    out += _group("lex", LEX_ERRORS)
    out += [_c(f"yaml-{i:02d}", t, p) for i, (t, p) in enumerate(YAML_TYPES)]
    return out
