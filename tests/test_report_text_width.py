"""Names are fitted by how wide the browser draws them, not by how many characters.

A CJK character is about one em wide in the browser, nearly two Latin letters; the
heatmap cut names at 36 characters, so a 24-character Chinese name (about 43 letters
wide) ran into the next panel's title."""

from __future__ import annotations

from pipeline.report.heatmap import _short_name
from pipeline.report.text_width import WIDE, fit, letters

CJK = "通义千问大模型开放平台企业版华东二区备用专线"  # 22 characters


def test_a_wide_character_counts_as_nearly_two_letters() -> None:
    assert letters("alpha") == 5
    assert letters("通义") == 2 * WIDE
    assert letters("ｄｅｅｐ") == 4 * WIDE  # fullwidth Latin is wide too


def test_a_cjk_name_is_cut_to_its_room() -> None:
    """Fails on the old cut by characters: all 22 characters fitted in 36."""
    title = _short_name(CJK)
    assert title.endswith("…") and letters(title) <= 36, title
    assert len(title) < len(CJK)


def test_latin_names_are_cut_as_before() -> None:
    """Guard: a Latin name is cut at the same place as by counting characters."""
    long = "a-very-long-provider-name-for-the-eu-west-region-enterprise-tier-backup"
    assert _short_name(long) == long[:35] + "…"
    assert fit("alpha", 5) == "alpha" and fit("alphabet", 5) == "alph…"
