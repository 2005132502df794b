"""The rule table: every lint rule's stable id, name, default severity and why."""

from __future__ import annotations

from dataclasses import dataclass

TEMPLATE_OPEN = "{{"


@dataclass(frozen=True)
class Rule:
    """One lint rule: its stable ``id``, a short ``name``, default severity and rationale.

    ``stops_run``: a finding of this rule at severity ``error`` makes a run meaningless
    (the procedure does not load, a fragment does not render, the prompt holds
    ``<no value>``), so ``ooda run`` stops on it. The other rules are advice: at
    ``error`` they fail ``ooda lint`` and the ``config`` item, and ``ooda run`` prints
    them as warnings and runs, as rooda would."""

    id: str
    name: str
    severity: str
    summary: str
    why: str
    configurable: bool = True
    stops_run: bool = False


RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        Rule(
            "OODA001",
            "config-error",
            "error",
            "the config file, or one procedure in it, does not load",
            "Nothing else can be checked until it loads; the loop would refuse it too. A "
            "broken procedure fails alone: the file's other procedures still load and run.",
            configurable=False,
            stops_run=True,
        ),
        Rule(
            "OODA002",
            "render-error",
            "error",
            "a fragment fails to render (template execution error)",
            "The loop would stop with this error on its first iteration.",
            stops_run=True,
        ),
        Rule(
            "OODA003",
            "config-warning",
            "warning",
            "the config loads with a warning (an unknown key, ignored)",
            "Unknown top-level keys, and any unknown key in a rooda-config.yml, are ignored, "
            "so a misspelt setting silently does nothing.",
        ),
        Rule(
            "OODA004",
            "scenario-error",
            "error",
            "a scenario file does not load, or names no procedure of the config",
            "pytest would fail its items, one mistake per run; a scenario in a folder no "
            "procedure is named after never runs at all.",
        ),
        Rule(
            "OODA005",
            "material-error",
            "error",
            "a command, skill, subagent, hook or plugin file the agent would drop or misread",
            "The agent reads its own material leniently and says nothing: a subagent without "
            "a name is dropped, a front matter that is not YAML is read line by line, a tool "
            "it does not know is never offered, a hook script that is not there fails each "
            "time its event fires.",
        ),
        Rule(
            "OODA006",
            "material-warning",
            "warning",
            "a command, skill, subagent or hook the agent reads otherwise than its author meant",
            "An unknown front-matter key is ignored, a skill is listed by its directory "
            "whatever its name says, a tool an older release had is no longer offered, an "
            "@file the project lacks is sent as text.",
        ),
        Rule(
            "OODA101",
            "empty-phase",
            "warning",
            "a phase has no fragments",
            "An empty phase is left out of the prompt: the agent gets no instruction for it "
            "(a raw prompt is its text alone: its other phases may be empty).",
        ),
        Rule(
            "OODA102",
            "duplicate-fragment",
            "warning",
            "the same fragment (same file and parameters) is listed twice in one phase",
            "The agent reads the same instruction twice; usually a copy-paste slip.",
        ),
        Rule(
            "OODA103",
            "unlimited-without-timeout",
            "warning",
            "iteration_mode unlimited without an iteration_timeout",
            "With no iteration limit and no timeout, one hung AI process stalls the loop forever.",
        ),
        Rule(
            "OODA104",
            "phase-as-string",
            "info",
            "a phase written as one string (rooda's v0.1.0 form) instead of a list",
            "The string form still loads, but only the list form takes several fragments, "
            "inline content or parameters; rooda's docs and ours use it.",
        ),
        Rule(
            "OODA201",
            "missing-parameter",
            "warning",
            "a template uses a parameter the fragment action does not supply",
            "Go templates render a missing key as the text <no value>, silently.",
        ),
        Rule(
            "OODA202",
            "unused-parameter",
            "warning",
            "a parameter is supplied that the template never uses",
            "Usually a misspelt parameter name, so the template gets <no value> instead.",
        ),
        Rule(
            "OODA203",
            "parameters-without-template",
            "warning",
            "parameters are given for a fragment with no template syntax",
            "The parameters have no effect: the fragment has nothing to substitute.",
        ),
        Rule(
            "OODA204",
            "template-without-parameters",
            "warning",
            "a fragment with template syntax is used without parameters",
            "Without parameters the file is used verbatim, so the agent sees raw {{...}} text.",
        ),
        Rule(
            "OODA205",
            "no-value",
            "error",
            "a fragment renders <no value> into the prompt (a parameter it reads is missing)",
            "The agent would read the text <no value> where the parameter belongs; Go "
            "templates print it for a missing key, nearly always a misspelt name.",
            stops_run=True,
        ),
        Rule(
            "OODA301",
            "no-success-signal",
            "error",
            "no fragment tells the agent when to emit <promise>SUCCESS</promise>",
            "The preamble only explains the signal; without procedure-specific success "
            "criteria the loop cannot end in success except by luck.",
        ),
        Rule(
            "OODA302",
            "no-failure-signal",
            "warning",
            "no fragment tells the agent when to emit <promise>FAILURE</promise>",
            "Without failure criteria a blocked agent keeps iterating until the limit.",
        ),
        Rule(
            "OODA303",
            "description-too-long",
            "warning",
            "a skill's, command's or subagent's description is over 1,024 characters",
            "Every description is in every request the agent makes; the Agent Skills format "
            "allows 1,024 characters, and the agent's own listing cuts at 1,536.",
        ),
        Rule(
            "OODA304",
            "description-too-vague",
            "warning",
            "a skill's or subagent's description is too short, or never says when to use it",
            "The model chooses a skill or subagent by its description alone: one that says "
            "neither what it does nor when it applies fires by luck.",
        ),
        Rule(
            "OODA305",
            "descriptions-overlap",
            "warning",
            "two items of one listing whose descriptions share most of their words",
            "The model cannot tell them apart, so which one fires is a coin toss; measured as "
            "the Jaccard similarity of their content words (60% or more, three words at least).",
        ),
        Rule(
            "OODA401",
            "unused-fragment-file",
            "info",
            "a fragment file in the config's fragment folders is used by no procedure",
            "Dead prompt text drifts out of date; delete it or use it.",
        ),
        Rule(
            "OODA402",
            "unused-alias",
            "info",
            "an ai_cmd_aliases entry is never used",
            "An alias nobody selects is noise, or a typo in an ai_cmd_alias somewhere.",
        ),
        Rule(
            "OODA404",
            "unneeded-allowed-tool",
            "warning",
            "a command or skill allows a tool its text never needs",
            "Each allowed tool is one the agent may use unasked; one the procedure never "
            "names nor asks for the work of is usually left over (a heuristic).",
        ),
        Rule(
            "OODA403",
            "redundant-builtin-override",
            "info",
            "a procedure overrides a built-in with identical values",
            "The entry changes nothing and will silently stop tracking built-in updates.",
        ),
    )
}
RULES_BY_NAME = {rule.name: rule for rule in RULES.values()}
