"""The suite's oracle: a read_committed reader that shares no code with the product it checks."""
