"""tf.layers: TF1's layers, as classes (`tf.layers.Dense(10)`) and functions (`tf.layers.dense(x, 10)`).

Each layer's variables live in its own variable scope ('dense/kernel', 'dense_1/kernel', ...), made with
get_variable, so `reuse=True`, variable-scope defaults and regularizers work as in TF1.
"""

from tfnb.layers.base import Layer
from tfnb.layers.convolutional import Conv2D, Conv2DTranspose, conv2d, conv2d_transpose
from tfnb.layers.core import Dense, Dropout, Flatten, dense, dropout, flatten
from tfnb.layers.normalization import BatchNormalization, batch_normalization
from tfnb.layers.pooling import (
           AveragePooling2D,
           MaxPooling2D,
           average_pooling2d,
           max_pooling2d,
)

# TF1's aliases
Convolution2D, Convolution2DTranspose = Conv2D, Conv2DTranspose
MaxPool2D, AveragePool2D = MaxPooling2D, AveragePooling2D

__all__ = ["Layer", "Conv2D", "Conv2DTranspose", "Convolution2D", "Convolution2DTranspose", "conv2d",
           "conv2d_transpose", "Dense", "Dropout", "Flatten", "dense", "dropout", "flatten", "BatchNormalization",
           "batch_normalization", "AveragePooling2D", "AveragePool2D", "MaxPooling2D", "MaxPool2D",
           "average_pooling2d", "max_pooling2d"]
