"""Naive Bayes models explained exactly, in linear time (the log-odds are a sum of one term per feature).

* :func:`terms_for`, :func:`contract`, :data:`NB_TYPES`, :data:`SPARSE_NB_TYPES`: the per-feature log-likelihood
  terms of every scikit-learn naive Bayes type;
* :func:`columnwise_order`, :func:`dense`: naive Bayes models inside column-wise pipelines (``ColumnTransformer``);
* :class:`WeightedNaiveBayes`: a selective / weighted naive Bayes (the paper's family of classifiers);
* :class:`NaiveBayesModel`, :func:`split_pipeline`, :func:`chunk_rows`, :func:`dense_chunks`: a fitted model read
  once (pipeline split, input validation, column map, terms and weights in input order), what
  ``NaiveBayesExplainer`` and :func:`nb_indicators` work from;
* :func:`nb_indicators`, :data:`NB_INDICATORS`: the paper's feature-importance indicators.
* :class:`NaiveBayesPath`: exact refits of the five naive Bayes classifiers on coalitions and permutation prefixes,
  registered with the residual game (:func:`~shap_instances.games.register_fast_path`).
"""

from ._columns import columnwise_order, dense
from ._fast_naive_bayes import NaiveBayesPath
from ._indicators import NB_INDICATORS, nb_indicators
from ._model import NaiveBayesModel, chunk_rows, dense_chunks, split_pipeline
from ._terms import NB_TYPES, SPARSE_NB_TYPES, contract, terms_for
from ._weighted_nb import WeightedNaiveBayes

__all__ = [
    "NaiveBayesPath",
    "NB_INDICATORS",
    "NB_TYPES",
    "NaiveBayesModel",
    "SPARSE_NB_TYPES",
    "WeightedNaiveBayes",
    "chunk_rows",
    "columnwise_order",
    "contract",
    "dense",
    "dense_chunks",
    "nb_indicators",
    "split_pipeline",
    "terms_for",
]
