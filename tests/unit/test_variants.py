"""Variants: ``--ooda-variant`` syntax, a scenario's ``variants:`` read with located
errors, and a variant applied to a config (model, parameters, fragment swaps)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_ooda.config import load_config_file
from pytest_ooda.errors import ConfigError, ScenarioError, UsageError
from pytest_ooda.scenario import load_scenario
from pytest_ooda.variants import Variant, apply_to_config, merged, parse_option

if TYPE_CHECKING:
    from pathlib import Path


def test_option_syntax() -> None:
    variant = parse_option(
        r"v2:ai_cmd=my-cli -p --flag a\,b,model=m-1,param.depth=3,"
        "fragment.prompts/a.md=prompts/b.md,prompt_format=rooda"
    )
    assert variant.name == "v2"
    assert variant.ai_cmd == "my-cli -p --flag a,b"
    assert variant.model == "m-1"
    assert dict(variant.parameters) == {"depth": "3"}
    assert dict(variant.fragments) == {"prompts/a.md": "prompts/b.md"}
    assert variant.prompt_format == "rooda"
    assert parse_option("baseline:") == Variant("baseline")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("novalue", "expected NAME:KEY=VALUE"),
        ("a b:model=m", "'a b' is not a variant name"),
        ("v:modle=m", "unknown key 'modle'"),
        ("v:model", "expected KEY=VALUE, got 'model'"),
        ("v:prompt_format=go", "prompt_format: expected one of ooda, rooda"),
        ("v:ai_output=json", "ai_output: expected one of text"),
        ("v:ai_cmd='unclosed", "No closing quotation"),
    ],
)
def test_option_mistakes(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_option(text)


def test_session_variants_replace_a_scenarios_of_the_same_name() -> None:
    own = (Variant("a", model="x"), Variant("b", model="y"))
    session = (Variant("b", model="z"), Variant("c"))
    assert [(v.name, v.model) for v in merged(own, session)] == [
        ("a", "x"),
        ("b", "z"),
        ("c", None),
    ]


def test_scenario_variants(tmp_path: Path) -> None:
    path = tmp_path / "s.yml"
    path.write_text(
        "procedure: b\nvariants:\n  baseline:\n  opus: {model: claude-opus}\n"
        "  v2:\n    fragments: {prompts/a.md: prompts/b.md}\n    parameters: {n: 2}\n"
    )
    variants = load_scenario(path).variants
    assert [v.name for v in variants] == ["baseline", "opus", "v2"]
    assert variants[1].model == "claude-opus"
    assert dict(variants[2].parameters) == {"n": 2}
    assert (variants[2].line, variants[2].column) == (5, 3)


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("variants: {}\n", "2:11", "name at least one variant"),
        ("variants: {'a@b': {model: m}}\n", "2:12", "'a@b' is not a variant name"),
        ("variants: {a: {modle: m}}\n", "2:16", "variants.a: unknown key 'modle'"),
        ("variants: {a: {prompt_format: go}}\n", "2:31", "variants.a.prompt_format: expected"),
        (
            "variants: {a: {ai_cmd: x, ai_cmd_alias: y}}\n",
            "2:15",
            "give ai_cmd or ai_cmd_alias, not both",
        ),
    ],
)
def test_scenario_variant_mistakes(tmp_path: Path, text: str, where: str, message: str) -> None:
    path = tmp_path / "s.yml"
    path.write_text("procedure: b\n" + text)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value).startswith(f"{path}:{where}: "), str(info.value)
    assert message in str(info.value)


CONFIG = """\
loop:
  ai_api: {provider: openai, model: base-model}
procedures:
  p:
    observe:
      - path: prompts/a.md
    act:
      - path: prompts/t.md
        parameters: {who: Ada, n: 1}
"""


@pytest.fixture
def config_path(tmp_path: Path) -> Path:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "a.md").write_text("A\n")
    (tmp_path / "prompts" / "b.md").write_text("B\n")
    (tmp_path / "prompts" / "t.md").write_text("Hi {{.who}} {{.n}}\n")
    path = tmp_path / "ooda-config.yml"
    path.write_text(CONFIG)
    return path


def test_a_variant_applied_to_a_config(config_path: Path) -> None:
    from pytest_ooda.compose import assemble_prompt

    config = load_config_file(config_path)
    changed = apply_to_config(
        config,
        "p",
        Variant(
            "v",
            model="other-model",
            parameters={"who": "Bob"},
            fragments={"prompts/a.md": "prompts/b.md"},
        ),
    )
    assert changed.loop.ai_api is not None
    assert changed.loop.ai_api.model == "other-model"
    prompt = assemble_prompt(changed.procedure("p"))
    assert "B\n" in prompt
    assert "A\n" not in prompt
    assert "Hi Bob 1" in prompt
    # The original is untouched.
    assert "Hi Ada 1" in assemble_prompt(config.procedure("p"))


def test_variants_that_do_not_apply(config_path: Path) -> None:
    config = load_config_file(config_path)
    where = {"source": str(config_path.parent / "s.yml"), "line": 4, "column": 3}
    with pytest.raises(ConfigError, match=r"has no fragment prompts/zz\.md") as info:
        apply_to_config(config, "p", Variant("v", fragments={"prompts/zz.md": "x.md"}, **where))  # type: ignore[arg-type]
    assert (info.value.line, info.value.column) == (4, 3)
    with pytest.raises(ConfigError, match=r"prompts/missing\.md"):
        apply_to_config(config, "p", Variant("v", fragments={"prompts/a.md": "prompts/missing.md"}))
    no_api = load_config_file(config_path)
    from dataclasses import replace

    no_api = replace(no_api, loop=replace(no_api.loop, ai_api=None))
    with pytest.raises(ConfigError, match="needs an ai_api backend"):
        apply_to_config(no_api, "p", Variant("v", model="m"))


def test_without_leaves_fragments_and_phases_out(config_path: Path, tmp_path: Path) -> None:
    from pytest_ooda.compose import assemble_prompt

    config = load_config_file(config_path)
    one = apply_to_config(config, "p", parse_option("cut:without=observe[0]"))
    assert one.procedure("p").observe == ()
    assert "Hi Ada 1" in assemble_prompt(one.procedure("p"))
    both = apply_to_config(config, "p", Variant("both", without=("observe", "act[0]")))
    assert both.procedure("p").phases() == {"observe": (), "orient": (), "decide": (), "act": ()}
    with pytest.raises(ConfigError, match=r"has no fragment act\[3\]") as info:
        apply_to_config(config, "p", Variant("v", without=("act[3]",)))
    assert info.value.hint == "its act phase has 1 fragment(s), from act[0]"
    with pytest.raises(UsageError, match="'observe\\[x\\]' is not a phase or a fragment"):
        parse_option("v:without=observe[x]")
    path = tmp_path / "s.yml"
    path.write_text('procedure: p\nvariants:\n  cut:\n    without: [act, "observe[0]"]\n')
    (variant,) = load_scenario(path).variants
    assert variant.without == ("act", "observe[0]")
    assert variant.to_yaml() == {"without": ["act", "observe[0]"]}
    path.write_text("procedure: p\nvariants:\n  cut:\n    without: [acts]\n")
    with pytest.raises(ScenarioError, match=r"s\.yml:4:15: variants\.cut\.without: 'acts'"):
        load_scenario(path)
