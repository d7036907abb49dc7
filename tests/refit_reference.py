"""The reference of the refit-path tests: what the residual game's generic refit path gives a subset, written
out as an explicit scikit-learn refit, and a check of a path's prefixes and coalitions against it."""

import warnings

import numpy as np
from sklearn.base import clone, is_classifier


def refit_value(model, X, y, rows, X_eval, y_eval, empty):
    """``clone(model).fit(X[rows], y[rows])``'s residuals on the explained rows (a classifier's: P(1) - y, P(1) = 0
    when class 1 is absent, as the game reads it), or ``empty`` where scikit-learn cannot fit or predict, or
    predicts non-finite values (the game's failed-fit value). The rows are taken in index order, as the game's
    mask takes them (scikit-learn 1.4's QDA of a class with fewer rows than features depends on their order)."""
    rows = np.sort(rows)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            fitted = clone(model).fit(X[rows], y[rows])
            if is_classifier(model):
                classes = list(fitted.classes_)
                predicted = fitted.predict_proba(X_eval)[:, classes.index(1.0)] if 1.0 in classes else 0.0
            else:
                predicted = fitted.predict(X_eval)
    except Exception:  # noqa: BLE001 - the refit path's failed-fit value
        return empty
    residuals = predicted - y_eval
    return residuals if np.all(np.isfinite(residuals)) else empty


def check_prefixes(path, model, X, y, X_eval, y_eval, seeds, rtol=1e-10):
    """Every prefix of the permutations seeded by ``seeds`` (or given as arrays), and the same subsets as single
    coalitions, equal to explicit refits (to ``rtol`` of the larger of 1 and the refit's largest residual); returns
    the set of kinds of values met: "empty" (failed fits) and "fitted"."""
    kinds = set()
    for seed in seeds:
        permutation = np.random.default_rng(seed).permutation(len(y)) if np.ndim(seed) == 0 else seed
        fast = path.prefix_residuals(permutation)
        for t in range(1, len(y) + 1):
            refit = refit_value(model, X, y, permutation[:t], X_eval, y_eval, path.empty)
            atol = rtol * max(1.0, float(np.abs(refit).max()))
            np.testing.assert_allclose(fast[t - 1], refit, rtol=0, atol=atol, err_msg=f"{model} prefix {t}")
            mask = np.zeros(len(y), bool)
            mask[permutation[:t]] = True
            np.testing.assert_allclose(path.residuals(mask), refit, rtol=0, atol=atol)
            kinds.add("empty" if np.array_equal(refit, path.empty) else "fitted")
    return kinds
