"""rules.md transcribed once for the tests: the knob table, column `standard`."""

STANDARD_KNOBS = {
    "single_one": 100,
    "single_five": 50,
    "three_ones": 1000,
    "n_of_a_kind": "flat",
    "four_kind": None,
    "five_kind": None,
    "six_kind": None,
    "straight": 1500,
    "partial_straights": None,
    "three_pairs": 1500,
    "four_kind_plus_pair": 1500,
    "two_triplets": 2500,
    "split_kinds": True,
    "opening": 500,
    "min_bank": 0,
    "farkle_penalty": 0,
    "penalty_after": 3,
    "target": 10000,
    "rounds": None,
}
