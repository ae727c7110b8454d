"""The rule bidder's system: the engine that evaluates rules (`engine`, `conditions`) and the rules
of each phase (`openings`, `responses`, `rebids`, `competition`, `later_rounds`), one module per
phase so that a change to, say, the responses to 1NT is made in one place.
`bridgeflow.training.bidding.rule_bidder` assembles them into tables and is the entry point."""
