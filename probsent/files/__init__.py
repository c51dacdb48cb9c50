"""Files, never left damaged: writes that land in one step (``atomic_writes``), a user's output
file that loses nothing (``user_output``), and untrusted input read within bounds (``untrusted``).
"""
