"""Fold schemes of the food-ranking runs: LOOCV up to a size, grouped K-fold above it.

**LOOCV** (docs/benchmark.md §3, the published protocol): fold ``r`` holds out analog row ``r``.
Its cost grows faster than linearly (n fits of every model, each on n - 1 products; the nested
ensembles n(n-1)/2 pair fits), so the build runs it only up to ``food_models_max_analogs``
analogs (dbt var, 400; docs/scaling.md).

**Grouped K-fold** (:class:`GroupedKFold`, above that size): the groups are the products (a
product's rows and every pair that contains it are on one side: the test products never appear in
a training pair, as in LOOCV, because pairs are built from the training products only,
:meth:`.bt.PairIndex.for_training`); the folds are stratified by category
(:meth:`GroupedKFold.assign`: categories in sorted order, each one's products shuffled with
``numpy.random.default_rng(seed)``, dealt round-robin onto the folds, the deal continuing across
categories), so each category's products are spread over the folds (a category with at most
``k`` products has each product in its own fold: a held-out product always has same-category
training products to be ranked against) and fold sizes differ by at most one. K = 10, seed 42
(:data:`KFOLD_K`, :data:`KFOLD_SEED`). The deal is written here rather than taken from
``sklearn.model_selection.StratifiedKFold``, which deals the same way but refuses when every
category has fewer than ``k`` products: the inner K-fold of a nested ensemble runs over one
outer fold's training products, where that happens. Preprocessing is fitted inside each fold
exactly as in LOOCV. :meth:`GroupedKFold.config` goes into the fit configuration, so a K-fold fit
never shares a configuration hash or fit id with a LOOCV fit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from warehouse.ranking.design import DesignError

KFOLD_K = 10
KFOLD_SEED = 42
GROUPING = "product, stratified by category"


@dataclass(frozen=True)
class GroupedKFold:
    """K folds of products, stratified by category (deterministic for a seed)."""

    k: int = KFOLD_K
    seed: int = KFOLD_SEED

    def config(self) -> dict[str, object]:
        """The part of a fit configuration that names this protocol."""
        return {
            "k": self.k,
            "grouping": GROUPING,
            "assignment": "categories sorted, products shuffled within each (numpy "
            "default_rng(seed)), dealt round-robin onto the folds across categories",
            "seed": self.seed,
        }

    def assign(self, category_index: np.ndarray) -> np.ndarray:
        """Fold id (0..k-1) of every row (rows are products, labels their category): categories
        in sorted order, each one's products in a seeded random order, dealt round-robin onto
        the folds, the deal continuing from one category to the next."""
        cat = np.asarray(category_index)
        if self.k < 2 or self.k > len(cat):
            raise DesignError(f"grouped K-fold: k = {self.k} needs 2 <= k <= {len(cat)} products")
        rng = np.random.default_rng(self.seed)
        fold = np.empty(len(cat), dtype=np.int64)
        dealt = 0
        for c in np.unique(cat):
            rows = rng.permutation(np.flatnonzero(cat == c))
            fold[rows] = (dealt + np.arange(len(rows))) % self.k
            dealt += len(rows)
        return fold

    def folds(self, category_index: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """``[(train rows, test rows)]`` of the k folds (sorted row indices), checked: every
        row is tested once, and every test row's category has training rows."""
        cat = np.asarray(category_index)
        fold = self.assign(cat)
        out = []
        for f in range(self.k):
            test = np.flatnonzero(fold == f)
            train = np.flatnonzero(fold != f)
            lonely = np.setdiff1d(cat[test], cat[train])
            if lonely.size:
                raise DesignError(
                    f"grouped K-fold fold {f}: category index {int(lonely[0])} has no training "
                    "product (every category needs >= 2 products)"
                )
            out.append((train, test))
        return out


def fold_scheme(n_analogs: int, max_loocv: int) -> GroupedKFold | None:
    """The protocol of a design of ``n_analogs``: LOOCV (``None``) up to ``max_loocv`` analogs,
    :class:`GroupedKFold` above."""
    return None if n_analogs <= max_loocv else GroupedKFold()
