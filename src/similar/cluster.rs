//! Clusters: connected components of the pairs graph.
