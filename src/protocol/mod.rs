//! PLACEHOLDER: being written. Replace this whole file.
