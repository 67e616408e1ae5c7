"""An honest random player: the attack is what its folder holds (tests/hosting/test_bot_folder.py
adds a FIFO, a 2 GiB sparse file or a link out of the folder to a copy)."""

from sdk import StrategyBot, run
from sdk.strategies import CardRandomStrategy, RandomStrategy

if __name__ == "__main__":
    run(StrategyBot(RandomStrategy, CardRandomStrategy))
