"""An honest random player behind a hostile name: the attack is the bot.toml, not the play."""

from sdk import StrategyBot, run
from sdk.strategies import CardRandomStrategy, RandomStrategy

if __name__ == "__main__":
    run(StrategyBot(RandomStrategy, CardRandomStrategy))
