"""Per-feature log-likelihood terms of scikit-learn's naive Bayes models.

Every naive Bayes model scores class c as ``jll_c(x) = prior_c + sum_m L_m(x_m, c)``. Each adapter gives the
constant ``class_terms`` (k,), the terms ``L @ A`` (n, p, D) of a batch of rows for an output contraction
``A`` (k, D) applied to the coefficients first (so two-class log-odds cost one pass over the data), and the
expectation of ``L`` under the training marginal of each feature (p, k). Everything else (Shapley values,
base values, output choices) is written once, in ``naive_bayes.py``.
"""

from __future__ import annotations

import numpy as np
from sklearn.naive_bayes import BernoulliNB, CategoricalNB, ComplementNB, GaussianNB, MultinomialNB

from ..exceptions import DataValidationError

__all__ = ["terms_for", "NB_TYPES"]

NB_TYPES = (GaussianNB, BernoulliNB, MultinomialNB, ComplementNB, CategoricalNB)


class _Gaussian:
    def __init__(self, model):
        self.theta, self.var = model.theta_, model.var_  # (k, p)
        self.class_terms = np.log(model.class_prior_)
        self.counts = model.class_count_

    def terms(self, X, A):
        # L = -log(2 pi var)/2 - (x - theta)^2 / (2 var), a quadratic in x: contract its coefficients with A
        inverse = 1.0 / self.var.T
        constant = (-0.5 * np.log(2 * np.pi * self.var.T) - 0.5 * self.theta.T**2 * inverse) @ A
        linear, quadratic = (self.theta.T * inverse) @ A, (-0.5 * inverse) @ A
        x = X[:, :, None]
        return constant[None] + x * (linear[None] + x * quadratic[None])

    def training_expectation(self):
        # X_m ~ sum_k pi_k N(theta_km, var_km): E[(X_m - theta_cm)^2] = sum_k pi_k (var_km + (theta_km - theta_cm)^2)
        pi = self.counts / self.counts.sum()
        second = np.einsum("k,kpc->pc", pi, self.var[:, :, None] + (self.theta[:, :, None] - self.theta.T[None]) ** 2)
        return -0.5 * np.log(2 * np.pi * self.var.T) - 0.5 * second / self.var.T


class _Linear:
    """Bernoulli, multinomial and complement NB: L_m(x, c) = x * slope_cm + intercept_cm."""

    def __init__(self, model):
        self.binarize = getattr(model, "binarize", None) if isinstance(model, BernoulliNB) else None
        log_p = model.feature_log_prob_  # (k, p)
        if isinstance(model, BernoulliNB):
            log_q = np.log1p(-np.exp(log_p))
            self.slope, self.intercept = (log_p - log_q).T, log_q.T
        else:
            self.slope, self.intercept = log_p.T, np.zeros_like(log_p.T)
        prior_applies = not isinstance(model, ComplementNB) or len(model.classes_) == 1
        self.class_terms = model.class_log_prior_ if prior_applies else np.zeros(len(model.classes_))
        self.mean_x = model.feature_count_.sum(axis=0) / model.class_count_.sum()  # training mean of each x_m
        self.nonnegative = not isinstance(model, BernoulliNB)

    def prepare(self, X):
        if self.binarize is not None:
            return (X > self.binarize).astype(np.float64)
        if self.nonnegative and np.any(X < 0):
            raise DataValidationError("Multinomial and complement naive Bayes take non-negative counts; X has "
                                      "negative values.")
        return X

    def terms(self, X, A):
        return self.prepare(X)[:, :, None] * (self.slope @ A)[None] + (self.intercept @ A)[None]

    def training_expectation(self):
        return self.mean_x[:, None] * self.slope + self.intercept


class _Categorical:
    def __init__(self, model):
        self.tables = model.feature_log_prob_  # list over features of (k, n_categories)
        self.class_terms = model.class_log_prior_
        self.counts = model.category_count_

    def prepare(self, X):
        codes = X.astype(np.int64)
        if not np.array_equal(codes, X):
            raise DataValidationError("CategoricalNB takes integer category codes; X has non-integer values "
                                      "(encode the columns first, e.g. with OrdinalEncoder or KBinsDiscretizer).")
        for m, table in enumerate(self.tables):
            bad = (codes[:, m] < 0) | (codes[:, m] >= table.shape[1])
            if bad.any():
                raise DataValidationError(
                    f"column {m} has categories {sorted(set(codes[bad, m].tolist()))[:5]} outside the fitted "
                    f"range 0..{table.shape[1] - 1}; refit with min_categories or map unseen categories first."
                )
        return codes

    def terms(self, X, A):
        codes = self.prepare(X)
        return np.stack([(A.T @ table)[:, codes[:, m]].T for m, table in enumerate(self.tables)], axis=1)

    def training_expectation(self):
        rows = []
        for table, counts in zip(self.tables, self.counts):
            frequency = counts.sum(axis=0) / counts.sum()
            rows.append(table @ frequency)
        return np.array(rows)


def terms_for(model):
    """The adapter of a fitted scikit-learn naive Bayes model."""
    if isinstance(model, GaussianNB):
        return _Gaussian(model)
    if isinstance(model, CategoricalNB):
        return _Categorical(model)
    return _Linear(model)
