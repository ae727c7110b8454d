"""Deep Monte Carlo self-play (DouZero): a network Q(state, call) over the BSM's state encoding and
each call's own features, epsilon-greedy actor processes playing duplicate auctions in lockstep,
and one learner fitting Q to the episode returns (IMPs between the two tables) by mean squared
error. The second way, next to policy iteration with search, to learn past the rule-based teacher."""
