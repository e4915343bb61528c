//! Property tests of the synchronizers on random input.
