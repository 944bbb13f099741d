"""quadsel verify: does the tuned selection beat the library default on this machine, and does the
library really follow the emitted rules file? (speed.py, follow.py, fingerprint.py, traffic.py)"""
