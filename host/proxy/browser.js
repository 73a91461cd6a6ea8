(function(){
if(window.__binkyBrowserLog)return;window.__binkyBrowserLog=1;
var E="/__binky/browser-log",q=[],t=0,n=0,F=window.fetch,C=console.error;
function s(v){try{if(v instanceof Error)return v.stack&&v.stack.indexOf(v.message)>=0?v.stack:String(v)+"\n"+(v.stack||"");if(typeof v=="string")return v;return JSON.stringify(v)}catch(e){return String(v)}}
function flush(){t=0;if(!q.length)return;var b=JSON.stringify(q.splice(0,20));if(q.length)t=setTimeout(flush,200);
try{if(navigator.sendBeacon&&navigator.sendBeacon(E,new Blob([b],{type:"text/plain"})))return}catch(e){}
try{if(F)F.call(window,E,{method:"POST",body:b,keepalive:true,credentials:"same-origin"})}catch(e){}}
function add(k,m,x){if(++n>500)return;x=x||{};x.kind=k;x.message=String(m).slice(0,4000);x.url=location.href;q.push(x);if(!t)t=setTimeout(flush,100)}
console.error=function(){try{add("console",[].map.call(arguments,s).join(" "))}catch(e){}return C.apply(this,arguments)};
addEventListener("error",function(e){if(e.target&&e.target!==window)return;add("error",e.message||s(e.error),{source:(e.filename||"")+":"+e.lineno+":"+e.colno,stack:e.error&&e.error.stack||""})});
addEventListener("unhandledrejection",function(e){add("rejection",s(e.reason))});
if(F)window.fetch=function(i,o){var u=i&&i.url?i.url:String(i),m=(o&&o.method||i&&i.method||"GET").toUpperCase()+" "+u,p=F.apply(this,arguments);p.then(function(r){if(r.status>=400)add("fetch",m+" answered "+r.status+" "+(r.statusText||""),{status:r.status})},function(e){add("fetch",m+" failed: "+String(e))});return p};
addEventListener("pagehide",flush);
})();
