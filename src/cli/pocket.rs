//! `lineage pocket build|query`: Potthast's pocket index on disk.
