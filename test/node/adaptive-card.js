// Parses an Adaptive Card with Microsoft's own library (npm adaptivecards)
// and reports what it objects to, for Bunting's integration tests. Reads
// one card (JSON) on stdin; writes {events: [...], card: <as parsed>}.
const AC = require('adaptivecards/dist/adaptivecards.js');

let input = '';
process.stdin.on('data', (d) => { input += d; });
process.stdin.on('end', () => {
    const card = new AC.AdaptiveCard();
    const ctx = new AC.SerializationContext();
    card.parse(JSON.parse(input), ctx);
    const events = [];
    for (let i = 0; i < ctx.eventCount; i++) {
        const e = ctx.getEventAt(i);
        events.push({ phase: e.phase, event: e.event, message: e.message });
    }
    process.stdout.write(JSON.stringify({ events, card: card.toJSON() }));
});
