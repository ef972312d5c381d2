// Custom activation strategies for `bunting proxy`, in the form the Node
// Unleash proxy loads (UPSTREAM_CUSTOM_STRATEGIES_FILE / customStrategies).
//
// The file is CommonJS: assign module.exports an array (or a single object).
// Each strategy has a `name` (the strategy name used in the flag's
// configuration) and `isEnabled(parameters, context)` returning a boolean.
// `parameters` holds the strategy's parameters as strings; `context` has
// userId, sessionId, remoteAddress, environment, appName, currentTime and
// properties. Calls are synchronous and stopped after a short deadline; a
// strategy that throws evaluates to false for that request only.
const { Strategy } = require('unleash-client');

// A class in the Node SDK's style: extend Strategy and call super(name).
class AllowedTeams extends Strategy {
    constructor() {
        super('allowedTeams');
    }

    isEnabled(parameters, context) {
        const teams = (parameters.teams || '').split(',').map((t) => t.trim());
        return teams.includes(context.properties.team);
    }
}

module.exports = [
    new AllowedTeams(),
    // A plain object works too.
    {
        name: 'weekdaysOnly',
        isEnabled(parameters, context) {
            const now = context.currentTime ? new Date(context.currentTime) : new Date();
            const day = now.getUTCDay();
            return day >= 1 && day <= 5;
        },
    },
];
