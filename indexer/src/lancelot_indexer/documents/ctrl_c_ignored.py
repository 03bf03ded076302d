"""Imported only in the readers' forkserver, as the first of its preloads (`workers.Workers`): Ctrl-C ignored there.

A forkserver gives each process it forks the SIGINT handler it had once its preloads were imported. Ignored, a
worker cannot take a Ctrl-C sent to the whole process group between its fork and its own setup
(`workers._leave_stops_to_the_parent`), where multiprocessing's bootstrap printed a KeyboardInterrupt traceback
under the parent's one-line stop. The parent ends its workers itself.
"""

import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)
