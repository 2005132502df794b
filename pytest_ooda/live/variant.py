"""The variant step of a live run: the session's settings and the loaded config changed
as the run's variant says (:mod:`pytest_ooda.variants`)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_ooda.config import Config
    from pytest_ooda.live.settings import LiveSettings


def variant_settings(settings: LiveSettings) -> LiveSettings:
    """``settings`` with the variant's agent command or alias, output format, prompt
    format and sandbox; unchanged without a variant."""
    variant = settings.variant
    if variant is None:
        return settings
    changes: dict[str, Any] = {}
    if variant.ai_cmd is not None:
        changes.update(ai_cmd=variant.ai_cmd, ai_cmd_alias=None)
    if variant.ai_cmd_alias is not None:
        changes.update(ai_cmd=None, ai_cmd_alias=variant.ai_cmd_alias)
    if variant.ai_output is not None:
        changes["ai_output"] = variant.ai_output
    if variant.prompt_format is not None:
        changes["prompt_format"] = variant.prompt_format
    if variant.sandbox is not None:
        # As --ooda-sandbox: the kind beats the scenario's and the config's sandbox:.
        changes["sandbox"] = variant.sandbox
    return replace(settings, **changes)


def variant_config(config: Config, procedure: str, settings: LiveSettings) -> Config:
    """The loaded config with the variant's model, parameters and fragment swaps; a
    variant's ``model`` on a run that resolves to an agent command is a mistake."""
    variant = settings.variant
    if variant is None:
        return config
    from pytest_ooda.config import resolve_run_settings
    from pytest_ooda.variants import apply_to_config

    changed = apply_to_config(config, procedure, variant)
    if variant.model is not None:
        resolved = resolve_run_settings(
            changed,
            procedure,
            ai_cmd=settings.ai_cmd,
            ai_cmd_alias=settings.ai_cmd_alias,
            require_ai=False,
        )
        if resolved.ai_cmd is not None:
            raise variant.error(
                f"sets model {variant.model!r}, but the run uses an agent command "
                f"({' '.join(resolved.ai_cmd)}), not ai_api",
                "give the variant an ai_cmd that selects the model, or run with ai_api",
            )
    return changed
