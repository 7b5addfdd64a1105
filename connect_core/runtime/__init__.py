"""The Connect worker runtime: task loops, committable-offset tracking, transformation chains."""
