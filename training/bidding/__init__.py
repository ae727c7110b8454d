"""Bidders: the rule-based bidder, the bidding system model (BSM: model, data, training), the
`Bidder` that plays a trained BSM, and `explain`."""
