//! PLACEHOLDER: generic property tests over every game (being written).
