"""Template filter naming an aggregation policy for people: ``{{ name|policy_label }}``."""

from __future__ import annotations

from django import template

from judging.aggregation import POLICIES

register = template.Library()


@register.filter(name="policy_label")
def policy_label(name: str) -> str:
    """Return the policy's label, or its id when no policy has it (an old, removed one)."""
    policy = POLICIES.get(str(name))
    return policy.label if policy is not None else str(name)
