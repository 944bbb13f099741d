"""The leaf-budget choice from the held-out folds' curve (decision/budget_rule.py)."""

import math

import pytest
from hypothesis import given, settings, strategies as st

from quadsel.decision.budget_rule import RULES, choose, rescaled


def test_min_takes_the_least_mean_and_the_smaller_budget_of_equal_means():
    per_fold = {1: [5.0, 5.0], 2: [3.0, 3.0], 4: [3.0, 3.0], None: [4.0, 4.0]}
    assert choose(per_fold, "min")[0] == 2


def test_one_standard_error_takes_the_smallest_budget_within_it():
    per_fold = {1: [4.0, 4.2, 3.8, 4.0], 2: [3.9, 3.7, 4.1, 3.5], 4: [3.0, 4.6, 2.4, 3.6], None: [3.5, 3.4, 3.6, 3.5]}
    assert choose(per_fold, "min")[0] == 4           # mean 3.40
    assert choose(per_fold, "1se")[0] == 2           # limit 3.40 + 0.47: budget 2 (3.80) is the smallest within
    assert choose(per_fold, "0.5se")[0] == 4         # limit 3.63


@settings(deadline=None)
@given(st.dictionaries(st.sampled_from([1, 2, 4, 8, 16]), st.lists(st.floats(0, 100), min_size=4, max_size=4),
                       min_size=1))
def test_a_wider_rule_never_takes_a_larger_budget(per_fold):
    per_fold = dict(sorted(per_fold.items()))
    order = list(per_fold)
    picks = [order.index(choose(per_fold, rule)[0]) for rule in ("min", "0.5se", "1se")]
    assert picks[0] >= picks[1] >= picks[2]
    means = choose(per_fold, "1se")[1]
    assert means[choose(per_fold, "1se")[0]] <= min(means.values()) + max(
        (max(v) - min(v) for v in per_fold.values()), default=0) + 1e-9


def test_unknown_rule():
    with pytest.raises(ValueError):
        choose({1: [1.0]}, "2se")
    assert set(RULES) == {"min", "0.5se", "1se", "thirds", "quarters", "rescaled", "thirds-rescaled", "measured-floor",
                          "measured-floor-1se", "measured-floor-ties", "measured-floor-1pt", "larger-ties",
                          "1se-larger", "loo", "loo-measured-floor", "measured-floor-every-grid", "thirds-floor"}


def test_the_fold_cut_rules_choose_like_min():
    per_fold = {1: [5.0, 5.0], 2: [3.0, 3.0], 4: [3.0, 3.0], None: [4.0, 4.0]}
    assert {choose(per_fold, rule)[0] for rule in ("thirds", "quarters", "rescaled")} == {2}


@given(st.sampled_from([None, 1, 2, 4, 8, 16, 32]), st.floats(1.0, 4.0), st.integers(1, 200))
def test_rescaled_is_the_nearest_power_of_two_on_the_ladder(budget, ratio, exact_leaves):
    out = rescaled(budget, ratio, lambda n: exact_leaves > n)
    if budget is None or budget == 1:
        assert out == budget
    elif out is None:                                  # the exact tree has no more leaves than the scaled budget
        assert exact_leaves <= 2 ** round(math.log2(budget * ratio))
    else:
        assert out & (out - 1) == 0 and exact_leaves > out
        assert abs(math.log2(out) - math.log2(budget * ratio)) <= 0.5 + 1e-9     # nearest power of two
        assert out >= budget                          # a larger grid never gets a smaller budget
