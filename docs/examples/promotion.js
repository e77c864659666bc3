// A time-limited promotion: consumers in GB may use the release until
// params.until (a block time, Unix seconds), at most params.cap times each.
// Run it locally:
//   stave script run docs/examples/promotion.js --host '{"grants.count": 2}' \
//     --input '{"request": {"consumer": "ab12", "territory": "GB"},
//               "time": 1700000000, "params": {"until": 1800000000, "cap": 3}}'
function decide(input) {
  const { request, time, params } = input;
  if (request.territory !== "GB") {
    return { allow: false, reason: "only GB, not " + request.territory };
  }
  if (time >= params.until) {
    return { allow: false, reason: "the promotion ended at " + params.until };
  }
  const used = stave.call("grants.count", { consumer: request.consumer });
  if (used >= params.cap) {
    return { allow: false, reason: "cap of " + params.cap + " grants reached" };
  }
  return { allow: true, reason: "promotion: " + used + " of " + params.cap + " grants used" };
}
