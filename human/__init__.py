"""Human-like input: Bezier mouse paths, typing rhythm and typos, and stealth (to come)."""
