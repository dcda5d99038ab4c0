"""The real tables shipped with scikit-learn (iris, wine, breast cancer) as DataFrames,
with the tables' own column names ("sepal length (cm)", "od280/od315_of_diluted_wines",
...) and class names."""

import numpy as np
from sklearn.datasets import load_breast_cancer, load_iris, load_wine

TABLES = {"iris": load_iris, "wine": load_wine, "breast_cancer": load_breast_cancer}


def frame_of(name):
    """The table ``name`` as a DataFrame, its class names in the column ``class``."""
    bunch = TABLES[name](as_frame=True)
    frame = bunch.data.copy()
    frame["class"] = np.asarray(bunch.target_names)[bunch.target.to_numpy()]
    return frame
