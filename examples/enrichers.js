// Context enrichers for `bunting proxy` (EXP_CUSTOM_ENRICHERS_FILE /
// expCustomEnrichers), in the Node Unleash proxy's form: module.exports is
// an array of functions (or one function) taking the context and returning
// the context to evaluate with. They run in order, each on the previous
// one's result. An enricher that throws, runs past its deadline or returns
// something that is not a context object is skipped (and logged).
module.exports = [
    // Derive a property from another one.
    (context) => {
        const email = context.properties.email || '';
        const at = email.lastIndexOf('@');
        if (at >= 0) {
            context.properties.emailDomain = email.slice(at + 1).toLowerCase();
        }
        return context;
    },
    // async functions are accepted as long as they await nothing pending.
    async (context) => ({ ...context, properties: { ...context.properties, tier: context.userId ? 'member' : 'guest' } }),
];
