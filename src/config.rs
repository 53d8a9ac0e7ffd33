//! Configuration: defaults, the config file, command-line overrides.
