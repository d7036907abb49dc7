"""Models fitted by this package: the selective (weighted) naive Bayes of the naive Bayes explainer's paper."""

from ._weighted_nb import WeightedNaiveBayes

__all__ = ["WeightedNaiveBayes"]
