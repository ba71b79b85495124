"""tui-eval's tests: unit/ (pure logic), integration/ (the real parts, by package), e2e/ (real processes and
terminals), health/ (the code's contracts); support/ holds what they share."""
