#!/usr/bin/env python3
"""A random bot in four lines with the helper module arena_bot.py."""
import random

from arena_bot import run

run(lambda request: random.choice(request["legal"]), name="sdk-example")
