"""Human-like input (Bezier mouse paths, typing rhythm with typos) and stealth for headless Chrome."""
