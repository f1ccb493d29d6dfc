"""House rules: validated at start, with errors that name the key."""

from __future__ import annotations

import json
import tomllib
from datetime import date

import pytest
from casefiles import DEFAULT_HOUSE, PAID_ROUND, expand_events
from click.testing import CliRunner

from auditor.cli import main
from auditor.house import HouseRulesError, parse
from auditor.rulesets import load_rulesets

ON = date(2026, 11, 1)


def _parse(text: str):
    return parse(tomllib.loads(text), load_rulesets(), ON)


def test_case_house_file_parses_and_merges_defaults():
    house = _parse(DEFAULT_HOUSE.read_text())
    table = house.table("BAC-02", "baccarat")
    assert table.listed and table["variant"] == "midi" and table["ez"] is True
    assert table["commission_percent"] == 5
    assert house.collection_procedure == {"PIT-1": "ii", "PIT-2": "iii"}
    assert house.table("BJ-01", "blackjack")["dealer_hits_soft_17"] is True


def test_unlisted_table_gets_section_defaults():
    house = _parse('facility = "X"\n[blackjack]\nsurrender = true\n')
    table = house.table("BJ-99", "blackjack")
    assert not table.listed and table["surrender"] is True


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[baccarat]\ncomission_percent = 5\n", "baccarat.comission_percent"),
        ("[baccarat]\ncommission_percent = 6\n", "baccarat.commission_percent"),
        ('[baccarat]\ndragon_bonus_pay_table = "D"\n', "baccarat.dragon_bonus_pay_table"),
        ("[baccarat]\nseats = [1, 1]\n", "baccarat.seats"),
        ('[baccarat.collection_procedure]\n"PIT-1" = "v"\n', "baccarat.collection_procedure.PIT-1"),
        ('[blackjack]\ninsurance_pays = "3:2"\n', "blackjack.insurance_pays"),
        ('[blackjack]\nblackjack_pays = "three to two"\n', "blackjack.blackjack_pays"),
        ("[blackjack]\npayout_limit = -1\n", "blackjack.payout_limit"),
        ('[[tables]]\ntable_id = "B"\ngame = "baccarat"\nvariant = "jumbo"\n', "tables[0].variant"),
        ('[[tables]]\ntable_id = "B"\ngame = "baccarat"\ndecks = 6\nshoe = 1\n', "tables[0].shoe"),
        (
            '[[tables]]\ntable_id = "B"\ngame = "baccarat"\ncommission_percent = 4\n',
            "tables[0].commission_percent",
        ),
        ('[[tables]]\ntable_id = "B"\ngame = "poker"\n', "tables[0].game"),
        ('[[tables]]\ngame = "baccarat"\n', "tables[0].table_id"),
        ('facilty = "X"\n', "facilty"),
        ('[blackjack]\nresplit_hand_placement = "left"\n', "blackjack.resplit_hand_placement"),
        ("[blackjack]\nresplit_hand_placement = true\n", "blackjack.resplit_hand_placement"),
        (
            '[[tables]]\ntable_id = "J"\ngame = "blackjack"\nresplit_hand_placement = "next"\n',
            "tables[0].resplit_hand_placement",
        ),
        (
            '[[tables]]\ntable_id = "B"\ngame = "baccarat"\nresplit_hand_placement = "end"\n',
            "tables[0].resplit_hand_placement",
        ),
        # numbers TOML reads but no key can hold: inf (1e400 too), nan, absurdly large
        ("[blackjack]\npayout_limit = 1e400\n", "blackjack.payout_limit"),
        ("[blackjack]\npayout_limit = inf\n", "blackjack.payout_limit"),
        ("[blackjack]\npayout_limit = nan\n", "blackjack.payout_limit"),
        ("[blackjack]\npayout_limit = 1e300\n", "blackjack.payout_limit"),
        ("[blackjack]\npayout_limit = 99999999999999999999999\n", "blackjack.payout_limit"),
        (
            '[[tables]]\ntable_id = "J"\ngame = "blackjack"\npayout_limit = 1e400\n',
            "tables[0].payout_limit",
        ),
        ("[baccarat]\ntie_pays = inf\n", "baccarat.tie_pays"),
        ("[baccarat]\nseats = [1, 99999999999999999999999]\n", "baccarat.seats"),
        ('[[tables]]\ntable_id = "J"\ngame = "blackjack"\ndecks = nan\n', "tables[0].decks"),
    ],
)
def test_bad_key_or_value_is_an_error_naming_the_key(text, key):
    with pytest.raises(HouseRulesError) as error:
        _parse(text)
    assert f"`{key}" in str(error.value)


def test_midi_table_may_use_its_own_commission_rate():
    house = _parse(
        '[[tables]]\ntable_id = "M"\ngame = "baccarat"\nvariant = "midi"\ncommission_percent = 4\n'
    )
    assert house.table("M", "baccarat")["commission_percent"] == 4


def test_resplit_hand_placement_per_section_and_table_unset_by_default():
    house = _parse(DEFAULT_HOUSE.read_text())
    assert house.table("BJ-01", "blackjack").settings.get("resplit_hand_placement") is None
    house = _parse(
        '[blackjack]\nresplit_hand_placement = "beside"\n'
        '[[tables]]\ntable_id = "J1"\ngame = "blackjack"\n'
        '[[tables]]\ntable_id = "J2"\ngame = "blackjack"\nresplit_hand_placement = "end"\n'
    )
    assert house.table("J1", "blackjack")["resplit_hand_placement"] == "beside"
    assert house.table("J2", "blackjack")["resplit_hand_placement"] == "end"
    assert house.table("J9", "blackjack")["resplit_hand_placement"] == "beside"  # unlisted


def test_unknown_resplit_hand_placement_exits_2_naming_the_key(tmp_path):
    house = tmp_path / "house.toml"
    house.write_text('[blackjack]\nresplit_hand_placement = "left"\n')
    log = tmp_path / "log.jsonl"
    log.write_text("")
    result = CliRunner().invoke(
        main, ["audit", str(log), "--house", str(house), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "blackjack.resplit_hand_placement" in result.output
    assert "Traceback" not in result.output




@pytest.mark.parametrize("limit", ["1e400", "-inf", "1e300"])
def test_a_payout_limit_no_number_can_hold_exits_2_naming_the_key(tmp_path, limit):
    house = tmp_path / "house.toml"
    house.write_text(DEFAULT_HOUSE.read_text().replace("payout_limit = 100000",
                                                       f"payout_limit = {limit}"))
    log = tmp_path / "log.jsonl"
    rows = expand_events(PAID_ROUND, {"table_id": "BJ-01", "game": "blackjack"})
    log.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = CliRunner().invoke(
        main, ["audit", str(log), "--house", str(house), "--out", str(tmp_path / "o"), "-q"]
    )
    # exit 2 of the command's own (a crash is exit 1 with the exception kept)
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "`blackjack.payout_limit`" in lines[0], result.output
