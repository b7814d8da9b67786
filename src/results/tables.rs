//! PLACEHOLDER: rating tables writer (being written).
