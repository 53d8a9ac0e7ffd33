//! Where documents come from: walking a root, classifying files.
